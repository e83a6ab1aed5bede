#!/usr/bin/env python3
"""What Python's `datasets` sees of the numbers in tool-call arguments of divergence-mine output.

Run by scripts/python-numbers-roundtrip.sh (which mines the inputs first); CI never runs it. Prints
one JSON document: for every output file, the `ls` call's arguments as `datasets` hands them to a
trainer (`load_dataset("json"|"parquet", data_files=...)`), each value with its Python type and repr.
  usage: python-numbers-roundtrip.py OUT_DIR  (holds trl-object.jsonl, trl-object.parquet, ...)
"""
import json
import sys
from pathlib import Path

import datasets
import pyarrow

def calls_of(messages):
    for m in messages or []:
        for c in m.get("tool_calls") or []:
            yield c

def seen(args):
    """The arguments as a trainer gets them: a dict (object mode) or a str (string mode, json.loads applied)."""
    if isinstance(args, str):
        parsed = json.loads(args)
        return {"as_given": "str", "text": args, "values": {k: f"{type(v).__name__} {v!r}" for k, v in parsed.items()}}
    return {"as_given": type(args).__name__, "values": {k: f"{type(v).__name__} {v!r}" for k, v in args.items()}}

def main(out_dir):
    out = {"datasets": datasets.__version__, "pyarrow": pyarrow.__version__, "files": {}}
    for path in sorted(Path(out_dir).iterdir()):
        kind = {".jsonl": "json", ".parquet": "parquet"}.get(path.suffix)
        if kind is None:
            continue
        try:
            ds = datasets.load_dataset(kind, data_files=str(path), split="train")
        except Exception as e:  # a loader that refuses the file is a finding too
            out["files"][path.name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}
            continue
        found = []
        for row in ds:
            for col in ("prompt", "chosen", "rejected"):
                for c in calls_of(row.get(col)):
                    a = c["function"]["arguments"]
                    text = a if isinstance(a, str) else None
                    obj = json.loads(a) if isinstance(a, str) else a
                    if isinstance(obj, dict) and obj.get("command") == "ls":
                        found.append({"column": col, **seen(a)})
        # One entry per distinct view (prompt and rejected carry the same call).
        uniq = [json.loads(s) for s in sorted({json.dumps(f, sort_keys=True) for f in found})]
        out["files"][path.name] = {"calls": uniq}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()

if __name__ == "__main__":
    main(sys.argv[1])

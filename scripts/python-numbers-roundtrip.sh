#!/bin/bash
# Measures what Python `datasets` (pip install datasets==5.0.1 pyarrow) sees of argument numbers in
# divergence-mine's trl output, JSONL and parquet, both --arguments modes. Writes
# fixtures/python-numbers/roundtrip.json (committed; CI never runs Python).
#   scripts/python-numbers-roundtrip.sh [PYTHON]   (PYTHON: an interpreter with datasets installed)
# Input: fixtures/numbers.jsonl (a real Nebius row, CC-BY-4.0 © Nebius) with the `ls` call's arguments
# widened to more number forms.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ARGS='{"command": "ls", "timeout": 1.0, "id": 12345678901234567890, "f": 1e5, "e": 1E+5, "pi": 3.141592653589793, "neg0": -0.0, "big": 1.5e300, "tiny": 5e-324, "n": 30}'
node -e '
const fs = require("fs");
const [src, dst, args] = process.argv.slice(1);
const from = JSON.stringify("{\"command\": \"ls\", \"timeout\": 1.0, \"id\": 12345678901234567890, \"f\": 1e5}").slice(1, -1);
const to = JSON.stringify(args).slice(1, -1);
const lines = fs.readFileSync(src, "utf8").split("\n").filter(Boolean).slice(0, 2); // resolved + the failed fork
fs.writeFileSync(dst, lines.map((l) => l.split(from).join(to)).join("\n") + "\n");
' fixtures/numbers.jsonl "$tmp/input.jsonl" "$ARGS"
mkdir "$tmp/out"
for mode in object string; do
  for fmt in jsonl parquet; do
    node bin/divergence-mine mine --jsonl "$tmp/input.jsonl" --shape trl --arguments "$mode" --out "$tmp/out/trl-$mode.$fmt" --quiet
  done
done
mkdir -p fixtures/python-numbers
"$PY" scripts/python-numbers-roundtrip.py "$tmp/out" > fixtures/python-numbers/roundtrip.json
echo "wrote fixtures/python-numbers/roundtrip.json"

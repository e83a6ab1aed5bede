#!/bin/bash
# The default pairing against --pairing tree on one file (bench/README.md "Tree pairing"):
# DuckDB scanning the same columns (bench/run.mjs --scan-child) as the yardstick, then both pairings,
# interleaved, each under /usr/bin/time -v. Usage: bench/tree-compare.sh FILE OUTDIR [ROUNDS]
set -euo pipefail
FILE=$1; OUT=$2; ROUNDS=${3:-2}
HERE=$(cd "$(dirname "$0")" && pwd); BIN="$HERE/../bin/divergence-mine"
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  /usr/bin/time -v node "$HERE/run.mjs" --scan-child "$FILE" --threads 2 > "$OUT/duckdb-$r.log" 2>&1
  /usr/bin/time -v node "$BIN" mine --parquet "$FILE" --out "$OUT/default.jsonl" --stats "$OUT/default.stats.json" --force --quiet --workers 2 > "$OUT/default-$r.log" 2>&1
  /usr/bin/time -v node "$BIN" mine --parquet "$FILE" --out "$OUT/tree.jsonl" --stats "$OUT/tree.stats.json" --force --quiet --workers 2 --pairing tree > "$OUT/tree-$r.log" 2>&1
done
for k in duckdb default tree; do
  for f in "$OUT/$k"-*.log; do
    printf '%s %s wall %s rss_kb %s\n' "$k" "$(basename "$f")" "$(grep 'Elapsed' "$f" | awk '{print $NF}')" "$(grep 'Maximum resident' "$f" | awk '{print $NF}')"
  done
done

#!/usr/bin/env python3
"""The Python part of the benchmark's writer matrix: rewrites one parquet file (e.g. a twin from
bench/gen.mjs) with pyarrow, polars and DuckDB, one file per writer and setting, row group by row group
where the writer allows, so memory stays near one row group (except the 65,536-row groups).

    python3 bench/matrix.py --file bench/data/twin-5k.parquet --out bench/data/matrix [--only pyarrow-gzip,polars-default]

A writer whose module is missing is skipped with one line on stderr. Prints one JSON line per written
file on stdout: {"name", "writer", "version", "seconds"}.
"""
import argparse
import importlib
import json
import os
import sys
import time


def regroup(pf, n):
    """Tables of exactly n rows (the last one shorter), whatever the input's row groups."""
    import pyarrow as pa
    buf, rows = [], 0
    for b in pf.iter_batches(batch_size=min(n, 4096)):
        buf.append(b)
        rows += b.num_rows
        while rows >= n:
            t = pa.Table.from_batches(buf)
            yield t.slice(0, n)
            rest = t.slice(n)
            buf, rows = rest.to_batches(), rest.num_rows
    if rows:
        yield pa.Table.from_batches(buf, schema=pf.schema_arrow)


def by_row_group(pf):
    for i in range(pf.num_row_groups):
        yield pf.read_row_group(i)


def pyarrow_writer(**kw):
    regroup_rows = kw.pop('regroup', None)

    def write(src, out):
        import pyarrow.parquet as pq
        pf = pq.ParquetFile(src)
        tables = regroup(pf, regroup_rows) if regroup_rows else by_row_group(pf)
        with pq.ParquetWriter(out, pf.schema_arrow, **kw) as w:
            for t in tables:
                w.write_table(t, row_group_size=regroup_rows or t.num_rows)
    return write


def polars_default(src, out):
    import polars as pl
    pl.scan_parquet(src).sink_parquet(out)


def duckdb_writer(options):
    def write(src, out):
        import duckdb
        con = duckdb.connect()
        q = lambda s: "'" + s.replace("'", "''") + "'"
        con.execute(f'COPY (SELECT * FROM read_parquet({q(src)})) TO {q(out)} (FORMAT parquet{options})')
        con.close()
    return write


# name -> (module, writer). Names match fixtures/writers/files/ where the same setting is there.
WRITERS = {
    'pyarrow-default': ('pyarrow', pyarrow_writer()),
    'pyarrow-zstd': ('pyarrow', pyarrow_writer(compression='zstd')),
    'pyarrow-data-page-v2': ('pyarrow', pyarrow_writer(data_page_version='2.0')),
    'pyarrow-gzip': ('pyarrow', pyarrow_writer(compression='gzip')),
    'pyarrow-lz4-raw': ('pyarrow', pyarrow_writer(compression='lz4')),
    'pyarrow-brotli': ('pyarrow', pyarrow_writer(compression='brotli')),
    'pyarrow-page-index': ('pyarrow', pyarrow_writer(write_page_index=True)),
    'pyarrow-row-groups-1024': ('pyarrow', pyarrow_writer(regroup=1024)),
    'pyarrow-row-groups-65536': ('pyarrow', pyarrow_writer(regroup=65536)),
    'pyarrow-small-pages': ('pyarrow', pyarrow_writer(data_page_size=8192, write_batch_size=256)),
    'pyarrow-no-dictionary': ('pyarrow', pyarrow_writer(use_dictionary=False)),
    'polars-default': ('polars', polars_default),
    'duckdb-default': ('duckdb', duckdb_writer('')),
    'duckdb-zstd-row-groups-2048': ('duckdb', duckdb_writer(', COMPRESSION zstd, ROW_GROUP_SIZE 2048')),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--file', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--only', help='comma-separated writer names')
    ap.add_argument('--list', action='store_true', help='print the writer names and exit')
    a = ap.parse_args()
    if a.list:
        print('\n'.join(WRITERS))
        return
    only = set(a.only.split(',')) if a.only else None
    os.makedirs(a.out, exist_ok=True)
    missing = set()
    for name, (module, write) in WRITERS.items():
        if only is not None and name not in only:
            continue
        try:
            mod = importlib.import_module(module)
        except ImportError:
            if module not in missing:
                print(f'matrix.py: {module} is not installed: skipping its writers (pip install {module})', file=sys.stderr)
            missing.add(module)
            continue
        out = os.path.join(a.out, name + '.parquet')
        tmp = out + '.tmp'
        t0 = time.monotonic()
        write(a.file, tmp)
        os.replace(tmp, out)  # never leave a half-written file under the final name
        secs = time.monotonic() - t0
        print(json.dumps({'name': name, 'writer': module, 'version': mod.__version__, 'seconds': round(secs, 2)}), flush=True)
        print(f'matrix.py: {out} in {secs:.1f} s', file=sys.stderr)


if __name__ == '__main__':
    main()

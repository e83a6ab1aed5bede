// merge refuses partitions that read a Hub dataset at different commits (src/commands/merge.ts), and
// the input fingerprint includes the commit of a Hub file (src/engine/partition.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkCompatible } from '../src/commands/merge.js';
import { fingerprintInputs } from '../src/engine/partition.js';
import type { InputFile } from '../src/io/inputs.js';

const root = mkdtempSync(join(tmpdir(), 'dm-hub-merge-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const file = join(root, 'a.parquet');
writeFileSync(file, 'PAR1 same bytes PAR1');
const at = (commit: string): InputFile => ({ path: file, kind: 'parquet', bytes: 20, source: { repo: 'o/n', revision: 'main', commit, path: 'a.parquet', etag: 'e'.repeat(64) } });

function part(i: number, input: InputFile) {
  const doc = {
    tool: 'divergence-mine',
    contract_version: 3,
    counters: { trajectories_read: 1, duplicate_trajectory_ids: 0, unlabelled: 0 },
    partition: { index: i, count: 2 },
    row_level: { bad_rows_index_pass: 0 },
    input_fingerprint: fingerprintInputs([input]),
    shape: 'published',
    options: {},
    inputs: [{ path: input.path, kind: input.kind, bytes: input.bytes, ...(input.source ? { hub: input.source } : {}) }],
  };
  return { path: `part-${i}.stats.json`, doc } as unknown as Parameters<typeof checkCompatible>[0][number];
}

describe('merge and Hub commits', () => {
  it('the fingerprint of a Hub file includes its commit; a local file keeps its old fingerprint', () => {
    const local: InputFile = { path: file, kind: 'parquet', bytes: 20 };
    expect(fingerprintInputs([at('1'.repeat(40))])).not.toBe(fingerprintInputs([at('2'.repeat(40))]));
    expect(fingerprintInputs([at('1'.repeat(40))])).not.toBe(fingerprintInputs([local]));
    expect(fingerprintInputs([local])).toBe(fingerprintInputs([{ ...local }]));
  });

  it('parts of one commit merge', () => {
    expect(checkCompatible([part(0, at('1'.repeat(40))), part(1, at('1'.repeat(40)))])).toBe(2);
  });

  it('parts of two commits are refused, naming both and how to pin', () => {
    expect(() => checkCompatible([part(0, at('1'.repeat(40))), part(1, at('2'.repeat(40)))])).toThrow(
      /part-1\.stats\.json: read other Hub files or commits than part-0\.stats\.json .*o\/n@2{40}\/a\.parquet.*o\/n@1{40}\/a\.parquet.*pin the revision: hf:\/\/datasets\/OWNER\/NAME@SHA/,
    );
  });
});

// The spill store and the walk over it (src/engine/spill.ts, src/engine/spill-walk.ts), table-driven: records
// read back exactly as written, whatever their size and wherever the writer's 1 MiB buffer flushes;
// the reader reopens what it closed; spilled trajectories give the continuations of
// `--continuation trajectory` beside the contract's row. Written to kill the mutants StrykerJS
// (`npm run mutate`) found alive. Messages are short stand-ins in the upstream shape.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { emptyCounters } from '../src/contract/counters.js';
import { encodeTrajectory } from '../src/engine/encode.js';
import { keyHash } from '../src/engine/key-hash.js';
import { normaliseMessage } from '../src/contract/normalise.js';
import { keyAndSignature } from '../src/contract/sign.js';
import { MEMORY_SPILL_PATH, MemorySpillReader, MemorySpillWriter } from '../src/engine/memory-spill.js';
import { ROLE_CODES } from '../src/engine/protocol.js';
import { continuation } from '../src/shapes/continuation.js';
import { HEADER, SpillReader, SpillWriter, decodeRecord, writeRecordJson } from '../src/engine/spill.js';
import { JsonBytes } from '../src/engine/json-bytes.js';
import { SpillTrajectory, hooksFor, jsonlHooksFor, type MinedContinuation } from '../src/engine/spill-walk.js';
import type { EmittedMessage, PairRow } from '../src/types.js';
import { walkInstance } from '../src/contract/walk.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-spill-pins-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const REASONING = new Set(['thought', 'reasoning', 'think']);
/** The writer's buffer (spill.ts FLUSH_BYTES): the sizes below are chosen around it. */
const BUFFER = 1 << 20;

interface Rec { code: number; message: EmittedMessage; signature: string }
/** Write records to a fresh spill file, read each back by its offsets. */
function roundTrip(recs: Rec[]): { message: EmittedMessage; signature: string }[] {
  const path = join(dir, `spill-${files++}`);
  const w = new SpillWriter(path);
  const ends = recs.map((r) => w.appendMessage(r.code, r.message, r.signature));
  w.close();
  const reader = new SpillReader();
  try {
    return ends.map((end, k) => {
      const start = k === 0 ? 0 : ends[k - 1]!;
      const b = reader.readBytes(path, start, end);
      const d = decodeRecord(b, 0);
      expect(d.end).toBe(end - start);
      // The walk's JSONL writes the record from its bytes: JSON.stringify of the decoded message.
      const out = new JsonBytes(16);
      expect(writeRecordJson(b, 0, out)).toBe(d.end);
      expect(Buffer.from(out.take()).toString('utf8')).toBe(JSON.stringify(d.message));
      return { message: d.message, signature: b.toString('utf8', d.signatureStart, d.end) };
    });
  } finally {
    reader.close();
  }
}

const A = ROLE_CODES.assistant;
const T = ROLE_CODES.tool;
const U = ROLE_CODES.user;
const big = (n: number, c = 'x') => c.repeat(n);

describe('spill records read back exactly', () => {
  const rows: [string, Rec[]][] = [
    ['a tool reply with a null tool_call_id', [{ code: T, message: { role: 'tool', content: 'ok', name: 'execute_bash', tool_call_id: null }, signature: '' }]],
    ['a tool reply with a null name and content', [{ code: T, message: { role: 'tool', content: null, name: null, tool_call_id: 'c1' }, signature: '' }]],
    ['a tool reply with empty strings', [{ code: T, message: { role: 'tool', content: '', name: '', tool_call_id: '' }, signature: '' }]],
    ['an assistant action', [{ code: A, message: { role: 'assistant', content: null, tool_calls: '[{"id":"c"}]' }, signature: 'execute_bash {"command":"ls"}' }]],
    ['an unknown role', [{ code: ROLE_CODES.other, message: { role: 'critic', content: 'hm' }, signature: '' }]],
    // Each field in turn large enough that two records overflow the buffer: the writer must
    // reserve room for every field and flush before the second.
    ['two large contents', [0, 1].map(() => ({ code: U, message: { role: 'user', content: big(600_000) }, signature: '' }))],
    ['two large tool names', [0, 1].map(() => ({ code: T, message: { role: 'tool', content: 'a', name: big(600_000), tool_call_id: 'c' }, signature: '' }))],
    ['two large tool_call_ids', [0, 1].map(() => ({ code: T, message: { role: 'tool', content: 'a', name: 'n', tool_call_id: big(600_000) }, signature: '' }))],
    ['two large tool_calls', [0, 1].map(() => ({ code: A, message: { role: 'assistant', content: 'a', tool_calls: big(600_000) }, signature: 's' }))],
    ['two large signatures', [0, 1].map(() => ({ code: A, message: { role: 'assistant', content: 'a', tool_calls: null }, signature: big(600_000) }))],
    ['a record larger than the buffer', [{ code: U, message: { role: 'user', content: big(BUFFER + 10) }, signature: '' }, { code: U, message: { role: 'user', content: 'after' }, signature: '' }]],
    // The first record leaves 699,039 bytes; the second needs 699,045 (3 bytes per "€"), exactly its
    // worst-case reservation (header, lengths, 3 bytes per UTF-16 unit): one byte less and it overflows.
    ['a record whose reservation is exact', [
      { code: U, message: { role: 'user', content: big(349_519) }, signature: '' },
      { code: U, message: { role: 'user', content: big(233_009, '€') }, signature: '' },
    ]],
  ];
  it.each(rows)('%s', (_name, recs) => {
    expect(roundTrip(recs)).toEqual(recs.map((r) => ({ message: r.message, signature: r.signature })));
  });

  it('the record header is 14 bytes', () => {
    expect(HEADER).toBe(14);
  });

  it('an index block after a nearly full buffer', () => {
    const path = join(dir, `spill-${files++}`);
    const w = new SpillWriter(path);
    // 18 + 3 * 349,519 = 1,048,575 bytes: one byte short of the buffer.
    const end = w.appendMessage(U, { role: 'user', content: big(349_519, '€') }, '');
    const block = w.appendIndexBlock(new Float64Array([0, end]), new Uint8Array([U]));
    w.close();
    const reader = new SpillReader();
    expect(block).toBe(end);
    expect([...reader.readBytes(path, block + 8, block + 17)]).toEqual([...new Uint8Array(new Float64Array([end]).buffer), U]);
    reader.close();
  });
});

// Open file descriptors of this process (Linux): counted around synchronous code only, where
// nothing else in the process opens or closes one.
const openFds = () => readdirSync('/proc/self/fd').length;

describe('file descriptors are released', () => {
  it('SpillWriter.close closes its file', () => {
    const before = openFds();
    const w = new SpillWriter(join(dir, `spill-${files++}`));
    w.append('x');
    expect(openFds()).toBe(before + 1);
    w.close();
    expect(openFds()).toBe(before);
  });

  it('SpillReader opens a file once and close closes it', () => {
    const path = join(dir, `spill-${files++}`);
    const w = new SpillWriter(path);
    w.append('hello');
    w.close();
    const before = openFds();
    const reader = new SpillReader();
    reader.read(path, 0, 2);
    reader.read(path, 2, 5);
    expect(openFds()).toBe(before + 1);
    reader.close();
    expect(openFds()).toBe(before);
  });
});

describe('SpillReader', () => {
  it('an empty range opens nothing', () => {
    const reader = new SpillReader();
    expect(reader.readBytes(join(dir, 'no-such-file'), 5, 5).length).toBe(0);
    expect(reader.read(join(dir, 'no-such-file'), 9, 3)).toBe('');
  });

  it('reads again after close', () => {
    const path = join(dir, `spill-${files++}`);
    const w = new SpillWriter(path);
    w.append('hello');
    w.close();
    const reader = new SpillReader();
    expect(reader.read(path, 0, 5)).toBe('hello');
    reader.close();
    expect(reader.read(path, 1, 4)).toBe('ell');
    reader.close();
  });

  it('a memory store closes without a file', () => {
    const w = new MemorySpillWriter();
    w.append('abc');
    expect(() => w.close()).not.toThrow();
    expect(new MemorySpillReader(w).read(MEMORY_SPILL_PATH, 0, 3)).toBe('abc');
  });
});

// --- the walk over spilled trajectories -------------------------------------------------------
type Raw = Record<string, unknown>;
const sys: Raw = { role: 'system', content: 'You are a coding agent.' };
const user: Raw = { role: 'user', content: 'Fix the failing test.' };
const call = (command: string, id: string): Raw => ({
  role: 'assistant',
  content: '',
  tool_calls: [{ id, type: 'function', function: { name: 'execute_bash', arguments: JSON.stringify({ command }) } }],
});
const result = (id: string, content: string): Raw => ({ role: 'tool', content, name: 'execute_bash', tool_call_id: id });
/** The emitted forms of the builders above (contract section 6), written out. */
const eSys: EmittedMessage = { role: 'system', content: 'You are a coding agent.' };
const eUser: EmittedMessage = { role: 'user', content: 'Fix the failing test.' };
const eCall = (command: string, id: string): EmittedMessage => ({
  role: 'assistant',
  content: '',
  tool_calls: `[{"id":"${id}","type":"function","function":{"name":"execute_bash","arguments":{"command":"${command}"}}}]`,
});
const eResult = (id: string, content: string): EmittedMessage => ({ role: 'tool', content, name: 'execute_bash', tool_call_id: id });

function spilled(trajectories: Raw[][], tools: (string | undefined)[] = []) {
  const store = new MemorySpillWriter();
  const ts = trajectories.map((t, k) => {
    const e = encodeTrajectory(k, t, REASONING, { malformed_arguments: 0, unknown_roles: 0 }, store);
    const block = store.appendIndexBlock(e.offsets, e.roles);
    return new SpillTrajectory(`t${k}`, 'o/r', { length: e.roles.length, block, tools: tools[k] }, MEMORY_SPILL_PATH);
  });
  const reader = new MemorySpillReader(store);
  for (const t of ts) t.load(reader);
  return { ts, reader };
}

const R = [sys, user, call('ls', 'c1'), result('c1', 'setup.py'), call('git diff', 'c2'), result('c2', '')];
const F = [sys, user, call('ls', 'c1'), result('c1', 'setup.py'), call('pytest -x', 'c3'), result('c3', '1 failed'), call('cat setup.py', 'c4')];
const eR = [eSys, eUser, eCall('ls', 'c1'), eResult('c1', 'setup.py'), eCall('git diff', 'c2'), eResult('c2', '')];
const eF = [eSys, eUser, eCall('ls', 'c1'), eResult('c1', 'setup.py'), eCall('pytest -x', 'c3'), eResult('c3', '1 failed'), eCall('cat setup.py', 'c4')];

describe('SpillTrajectory', () => {
  it('names itself for a walk task and keeps its tools', () => {
    const { ts } = spilled([R, F], ['[{"type":"function"}]']);
    expect(ts[0]!.ref()).toEqual({ trajectoryId: 't0', repo: 'o/r', length: 6, block: ts[0]!.ref().block, spill: MEMORY_SPILL_PATH });
    expect(ts[1]!.ref().length).toBe(7);
    expect(ts[0]!.tools).toBe('[{"type":"function"}]');
    expect(ts[1]!.tools).toBeNull();
  });

  it('is unusable once unloaded, and loads again', () => {
    const { ts, reader } = spilled([R]);
    const t = ts[0]!;
    expect(t.role(4)).toBe('assistant');
    t.unload();
    expect(() => t.role(4)).toThrow('trajectory t0: index block not loaded');
    expect(t.load(reader).role(3)).toBe('tool');
  });
});

// Comparison keys are hashed from the spill records when the walk first compares a message.
describe('SpillTrajectory: comparison keys from the records, read as the walk reaches them', () => {
  /** Counts the spill bytes read (the index blocks included). */
  class CountingReader extends MemorySpillReader {
    bytes = 0;
    override readBytes(path: string, start: number, end: number): Buffer {
      this.bytes += Math.max(0, end - start);
      return super.readBytes(path, start, end);
    }
  }
  // Messages of every size around the 64 KiB read: records straddle, fill and exceed one read.
  const sizes = [10, 70_000, 5, 65_000, 1_000, 200_000, 3, 30_000, 30_000, 30_000, 8];
  const long = (k: number): Raw[] => [sys, user, ...sizes.flatMap((n, j) => [call(`step ${j}`, `c${j}`), result(`c${j}`, `${k}`.repeat(n))])];

  it('every key hash equals that of the message itself, in any order of asking', () => {
    const a = long(1);
    const { ts } = spilled([a, a]);
    const [x, y] = ts;
    // y is asked out of order (a late index first); x in order.
    expect(y!.keyHash(a.length - 1)).toBe(x!.keyHash(a.length - 1));
    for (let i = 0; i < a.length; i++) {
      expect(x!.sameKey(i, y!)).toBe(true);
      expect(x!.keyHash(i)).toBe(y!.keyHash(i));
    }
    // The hash of the key of the normalised message (what encodeTrajectory hashed before keys moved to the walk).
    const own = (m: Raw) => keyHash(keyAndSignature(normaliseMessage(m, { malformed_arguments: 0, unknown_roles: 0 }), REASONING).key).toString('latin1');
    expect(a.map((_, i) => x!.keyHash(i))).toEqual(a.map(own));
  });

  it('tells apart the outputs that differ, and only those', () => {
    const { ts } = spilled([long(1), long(2)]);
    const diff = long(1).map((_, i) => !ts[0]!.sameKey(i, ts[1]!));
    // The tool results (odd indices from 3 on) differ; system, user and the calls do not.
    expect(diff).toEqual(long(1).map((_, i) => i >= 3 && i % 2 === 1));
  });

  it('reads no record past the divergence', () => {
    const store = new MemorySpillWriter();
    const ts = [long(1), long(1)].map((t, k) => {
      // The two part at message 3, the output of `step 0` (an environment divergence).
      const m = k === 0 ? t : [...t.slice(0, 3), result('c0', 'other'), ...t.slice(4)];
      const e = encodeTrajectory(k, m, REASONING, { malformed_arguments: 0, unknown_roles: 0 }, store);
      return new SpillTrajectory(`t${k}`, 'o/r', { length: e.roles.length, block: store.appendIndexBlock(e.offsets, e.roles) }, MEMORY_SPILL_PATH);
    });
    const reader = new CountingReader(store);
    for (const t of ts) t.load(reader);
    const counters = emptyCounters();
    walkInstance([ts[0]!], [ts[1]!], { minSimilaritySkip: 0.95, maxPairsPerInstance: 4 }, hooksFor({ instanceId: 'I' }, reader, null), counters);
    expect(counters.environment_divergence).toBe(1);
    // Both trajectories hold about 426 kB of messages each; the walk read the index blocks and the
    // records up to message 3 (the 70 kB output is message 5) plus at most one 64 KiB read each.
    expect(reader.bytes).toBeLessThan(2 * (1 << 16) + 4096);
    expect(store.contents().length).toBeGreaterThan(800_000);
  });
});

// Worker walk tasks write each kept row's JSON line from the spill bytes (jsonlHooksFor): the same
// bytes as JSON.stringify of the row hooksFor builds, and the same counters.
describe('jsonlHooksFor: the JSONL of hooksFor rows, written from the records', () => {
  // Shared up to message 7, where they part: a call, or (even k) a text reply with a lone surrogate.
  const odd = (k: number): Raw[] => [
    sys,
    { role: 'user', content: 'Fix "it" \\ now\r\n\t\u0001 caf\u00e9 😀 \u2028' },
    call('ls', 'c1'),
    { role: 'tool', content: null, name: null, tool_call_id: 'c1' },
    { role: 'developer', content: 'note\ud800' },
    call('cat log', 'c2'),
    result('c2', '"quoted"\t\\\n\u001b[0m '.repeat(8_000)),
    k % 2 === 1 ? call(`step ${k}`, `c${k}`) : { role: 'assistant', content: `done ${k} \udc00`, tool_calls: null },
  ];
  const rows: [string, Raw[][], number][] = [
    ['one resolved, one failed, parting at a call', [R, F], 1],
    ['three against two, with lone surrogates, nulls, an unknown role and long outputs', [odd(1), odd(2), odd(3), odd(4), R], 3],
    ['rows capped at one per instance', [odd(1), odd(2), odd(3)], 2],
  ];
  it.each(rows)('%s', (_name, trajectories, resolvedCount) => {
    const { ts, reader } = spilled(trajectories);
    const resolved = ts.slice(0, resolvedCount);
    const failed = ts.slice(resolvedCount);
    const opts = { minSimilaritySkip: 0.95, maxPairsPerInstance: _name.includes('capped') ? 1 : 10 };
    const byValue = emptyCounters();
    const want = walkInstance(resolved, failed, opts, hooksFor({ instanceId: 'I "1"' }, reader, null), byValue).map((r) => `${JSON.stringify(r)}\n`).join('');
    const byBytes = emptyCounters();
    const out = new JsonBytes(64);
    const kept = walkInstance(resolved, failed, opts, jsonlHooksFor({ instanceId: 'I "1"' }, reader, out), byBytes);
    expect(Buffer.from(out.take()).toString('utf8')).toBe(want);
    expect(byBytes).toEqual(byValue);
    expect(kept.length).toBe(byValue.pairs_emitted);
    expect(byValue.pairs_emitted).toBeGreaterThan(0);
  });

  it('a trajectory without a repo writes "repo":null', () => {
    const { ts, reader } = spilled([R, F]);
    const noRepo = (t: SpillTrajectory) => new SpillTrajectory(t.trajectoryId, null, { length: t.length, block: t.ref().block }, MEMORY_SPILL_PATH).load(reader);
    const out = new JsonBytes(64);
    walkInstance([noRepo(ts[0]!)], [noRepo(ts[1]!)], { minSimilaritySkip: 0.95, maxPairsPerInstance: 4 }, jsonlHooksFor({ instanceId: 'I' }, reader, out), emptyCounters());
    const row = JSON.parse(Buffer.from(out.take()).toString('utf8')) as PairRow;
    expect(row.repo).toBeNull();
    expect(Object.keys(row)).toEqual(['prompt', 'chosen', 'rejected', 'instance_id', 'repo', 'chosen_trajectory_id', 'rejected_trajectory_id', 'divergence_turn', 'divergence_msg_index', 'action_similarity']);
  });
});

describe('--continuation trajectory: both sides from the divergence on, beside the row', () => {
  // R and F part at message 4. From there R has one turn of 2 messages; F two turns (2 and 1).
  // `swap`: F is the resolved side and R the failed one.
  const rows: [string, boolean, number | undefined, { chosen: number; rejected: number; complete: boolean }][] = [
    ['uncut: both sides to their end', false, undefined, { chosen: 2, rejected: 3, complete: true }],
    ['at most 2 messages: F (rejected) loses its last turn', false, 2, { chosen: 2, rejected: 2, complete: false }],
    ['at most 2 messages: F (chosen) loses its last turn', true, 2, { chosen: 2, rejected: 2, complete: false }],
  ];
  it.each(rows)('%s', (_name, swap, maxMessages, want) => {
    const { ts, reader } = spilled(swap ? [F, R] : [R, F]);
    const [cR, cF] = swap ? [eF, eR] : [eR, eF];
    const cont = { maxMessages, rows: new Map<PairRow, MinedContinuation>() };
    const counters = emptyCounters();
    const mined = walkInstance([ts[0]!], [ts[1]!], { minSimilaritySkip: 0.95, maxPairsPerInstance: 4 }, hooksFor({ instanceId: 'I' }, reader, cont), counters);
    const plain = walkInstance([ts[0]!], [ts[1]!], { minSimilaritySkip: 0.95, maxPairsPerInstance: 4 }, hooksFor({ instanceId: 'I' }, reader, null), emptyCounters());
    expect(mined).toEqual(plain);
    expect(mined.map((r) => [r.divergence_msg_index, r.prompt, r.chosen, r.rejected])).toEqual([[4, cR.slice(0, 4), cR[4], cF[4]]]);
    const c = cont.rows.get(mined[0]!)!;
    expect(c).toEqual({ chosen: continuation(cR, 4, maxMessages), rejected: continuation(cF, 4, maxMessages), complete: want.complete });
    expect([c.chosen.length, c.rejected.length]).toEqual([want.chosen, want.rejected]);
  });
});

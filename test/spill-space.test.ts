// src/engine/spill-space.ts and SpillWriter with a placer (spill.ts): trajectories go whole into
// segments, a segment whose trajectories are all released is written again, a trajectory larger
// than a segment streams to a run that is never written again, and every trajectory not released
// reads back exactly as the same trajectory appended to a plain spill file.
//
// The trajectories are the three real rows of nebius/SWE-rebench-openhands-trajectories in
// fixtures/nebius-openhands-sample.json (CC-BY-4.0, © Nebius), whole or cut to their first messages.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeTrajectory } from '../src/engine/encode.js';
import { DEFAULT_REASONING_KEYS } from '../src/contract/sign.js';
import { SEGMENT_BYTES, SpillPlacer, SpillSpace, segmentBytes } from '../src/engine/spill-space.js';
import { SpillReader, SpillWriter, readIndexBlock } from '../src/engine/spill.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-spill-space-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const spillPath = () => join(dir, `spill-${files++}.bin`);
const ROWS = JSON.parse(readFileSync(new URL('../fixtures/nebius-openhands-sample.json', import.meta.url), 'utf8')) as { trajectory: unknown[] }[];
const REASONING = new Set(DEFAULT_REASONING_KEYS);
const S = SEGMENT_BYTES;

describe('segmentBytes: the segment size DIVERGENCE_MINE_SPILL_SEGMENT names', () => {
  it.each([
    [undefined, 4 * 2 ** 20],
    ['65536', 65536],
    ['1048576', 2 ** 20],
    ['1073741824', 2 ** 30],
    ['32768', 4 * 2 ** 20],
    ['2147483648', 4 * 2 ** 20],
    ['100000', 4 * 2 ** 20],
    ['1e6', 4 * 2 ** 20],
    ['abc', 4 * 2 ** 20],
    ['', 4 * 2 ** 20],
  ])('%s -> %d', (given, bytes) => expect(segmentBytes(given)).toBe(bytes));
});

describe('SpillPlacer: where trajectories go', () => {
  // Each step: place(bytes) -> expected position, or release(position of an earlier step) / run.
  type Step = ['place', number, number] | ['release', number] | ['run', number, number];
  const cases: { name: string; steps: Step[] }[] = [
    { name: 'consecutive trajectories fill a segment', steps: [['place', 100, 0], ['place', 200, 100], ['place', S - 300, 300], ['place', 1, S]] },
    { name: 'a trajectory that does not fit the rest starts a new segment', steps: [['place', S - 10, 0], ['place', 11, S], ['place', S - 11, S + 11]] },
    {
      name: 'a released segment is written again once the current one is full',
      steps: [['place', S, 0], ['place', S, S], ['release', 0], ['place', 10, 0], ['place', 10, 10]],
    },
    {
      name: 'a segment is not written again while one of its trajectories is not released',
      steps: [['place', 100, 0], ['place', S - 100, 100], ['release', 0], ['place', 10, S], ['place', S, 2 * S]],
    },
    {
      name: 'the current segment is filled again from its start once all its trajectories are released',
      steps: [['place', 100, 0], ['place', 200, 100], ['release', 0], ['release', 100], ['place', S - 10, 0]],
    },
    {
      name: 'a run goes to the end of the file and is never written again',
      steps: [['place', 100, 0], ['run', 2 * S + 5, S], ['release', S], ['place', S - 50, 4 * S], ['release', 0], ['place', S, 0], ['place', 10, 5 * S]],
    },
  ];
  it.each(cases)('$name', ({ steps }) => {
    const space = new SpillSpace();
    const placer = new SpillPlacer(space);
    for (const step of steps) {
      if (step[0] === 'place') expect(placer.place(step[1]), `${JSON.stringify(step)}`).toBe(step[2]);
      else if (step[0] === 'release') space.release(step[1]);
      else {
        expect(placer.startRun()).toBe(step[2]);
        placer.endRun(step[2] + step[1]);
      }
    }
  });

  it('the main thread and the writer share the counts through the buffer', () => {
    const writer = new SpillPlacer(new SpillSpace());
    const main = new SpillSpace(writer.space.shared);
    expect(writer.place(S)).toBe(0);
    expect(writer.place(S)).toBe(S);
    main.release(0);
    expect(writer.place(S)).toBe(0);
  });

  it('refuses a release of more trajectories than were placed, and a trajectory larger than a segment', () => {
    const space = new SpillSpace();
    const placer = new SpillPlacer(space);
    placer.place(10);
    space.release(0);
    expect(() => space.release(0)).toThrow(/released more often than placed/);
    expect(() => placer.place(S + 1)).toThrow(RangeError);
  });
});

describe('SpillWriter with a placer', () => {
  /** Trajectory k of a run: a real row, cut to a number of messages that varies with k. */
  const trajectory = (k: number): unknown[] => {
    const t = ROWS[k % ROWS.length]!.trajectory;
    return t.slice(0, 2 + ((k * 37) % (t.length - 1)));
  };
  /**
   * A real tool output repeated to `bytes`: past a segment, its trajectory goes to a run (placed at
   * its index block while buffered whole, streamed once it outgrows the buffer).
   */
  const large = (bytes = S + 1): unknown[] => {
    const t = ROWS[0]!.trajectory as { role: string; content: string }[];
    const tool = t.findIndex((m) => m.role === 'tool');
    const big = { ...t[tool]!, content: t[tool]!.content.repeat(Math.ceil(bytes / t[tool]!.content.length)) };
    return [...t.slice(0, tool), big, ...t.slice(tool + 1, tool + 4)];
  };

  /** Record bytes and index block of each trajectory, written by `w`. */
  const write = (w: SpillWriter, list: unknown[][], keyBase: number) =>
    list.map((value, k) => {
      const t = encodeTrajectory(keyBase + k, value, REASONING, { malformed_arguments: 0, unknown_roles: 0 }, w);
      expect(t.bad).toBeUndefined();
      return { n: t.roles.length, block: w.appendIndexBlock(t.offsets, t.roles) };
    });
  /** Each record of the trajectory at `block`, as its bytes. */
  const records = (reader: SpillReader, path: string, t: { n: number; block: number }) => {
    const { offsets, roles } = readIndexBlock(reader, path, t.block, t.n);
    expect(offsets[t.n]).toBe(t.block);
    return { roles: [...roles], records: Array.from({ length: t.n }, (_, i) => reader.readBytes(path, offsets[i]!, offsets[i + 1]!).toString('hex')) };
  };

  it('trajectories not released read back exactly as appended ones, while released space is written again', () => {
    const placed = spillPath();
    const appended = spillPath();
    const space = new SpillSpace();
    const w = new SpillWriter(placed, new SpillPlacer(space));
    const plain = new SpillWriter(appended);
    const reader = new SpillReader();
    const live: { placed: { n: number; block: number }; plain: { n: number; block: number } }[] = [];
    let total = 0;
    for (let round = 0; round < 12; round++) {
      const list = Array.from({ length: 20 }, (_, k) => trajectory(round * 20 + k));
      // Bytes before a trajectory's records that nothing refers to (a trajectory that turned bad).
      w.append('records of a trajectory that turned bad');
      plain.append('records of a trajectory that turned bad');
      if (round === 5) list.push(large());
      const a = write(w, list, round * 100);
      const b = write(plain, list, round * 100);
      w.flush();
      plain.flush();
      total = statSync(appended).size;
      a.forEach((t, k) => live.push({ placed: t, plain: b[k]! }));
      // Walk (release) all but every seventh trajectory written so far.
      for (let k = live.length - 1; k >= 0; k--) {
        if ((round + k) % 7 === 0) continue;
        space.release(live[k]!.placed.block);
        live.splice(k, 1);
      }
      for (const t of live) expect(records(reader, placed, t.placed)).toStrictEqual(records(reader, appended, t.plain));
    }
    w.close();
    plain.close();
    reader.close();
    // The file holds the live trajectories, the run and the space not yet written again: far less than all.
    expect(total).toBeGreaterThan(8 * S);
    expect(statSync(placed).size).toBeLessThan(total / 2);
  });

  it.each([
    ['placed whole at its index block', S + 1],
    ['streamed once it outgrows the buffer', 4 * S + 1],
  ])('a trajectory larger than a segment goes to a run that is never written again (%s)', (_name, bytes) => {
    const path = spillPath();
    const space = new SpillSpace();
    const w = new SpillWriter(path, new SpillPlacer(space));
    const reader = new SpillReader();
    const [small] = write(w, [trajectory(1)], 0);
    const [big] = write(w, [large(bytes)], 1);
    expect(small!.block).toBeLessThan(S);
    expect(big!.block).toBeGreaterThan(bytes);
    const end = big!.block + 8 * (big!.n + 1) + big!.n;
    const plainBig = spillPath();
    const bigWriter = new SpillWriter(plainBig);
    const [bigAgain] = write(bigWriter, [large(bytes)], 1);
    bigWriter.close();
    w.flush();
    expect(records(reader, path, big!)).toStrictEqual(records(reader, plainBig, bigAgain!));
    space.release(small!.block);
    space.release(big!.block);
    // The next trajectories fill the released first segment, then new ones after the run.
    const next = write(w, Array.from({ length: 40 }, (_, k) => trajectory(k)), 10);
    expect(next[0]!.block).toBeLessThan(S);
    for (const t of next) expect(t.block < S || t.block >= Math.ceil(end / S) * S).toBe(true);
    const plainPath = spillPath();
    const plain = new SpillWriter(plainPath);
    const again = write(plain, Array.from({ length: 40 }, (_, k) => trajectory(k)), 10);
    w.close();
    plain.close();
    next.forEach((t, k) => expect(records(reader, path, t)).toStrictEqual(records(reader, plainPath, again[k]!)));
    reader.close();
  });
});

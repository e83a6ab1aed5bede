// Input that is valid JSON but hostile: values nested deeper than MAX_JSON_DEPTH (1,000 levels) are a
// clean input error (exit 7, naming file, row and column) instead of a stack-overflow crash, and
// object keys named like Object.prototype members ("__proto__", "constructor") are data that every
// stage keeps (contract 9.9). Unit tables for the pure parts, then the BUILT CLI end to end.
//
// Rows are derived from fixtures/forks.jsonl: real rows of nebius/SWE-rebench-openhands-trajectories,
// CC-BY-4.0 © Nebius (Trofimova et al., "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct",
// Nebius blog, 2025), truncated and with edited tool-call arguments.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestedDeeperThan, parseJson } from '../src/contract/json-depth.js';
import { BadValue, normaliseToolCall } from '../src/contract/normalise.js';
import { canonArguments, DEFAULT_REASONING_KEYS } from '../src/contract/sign.js';
import { stripNulls } from '../src/shapes/trl.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'divergence-mine');
const dir = mkdtempSync(join(tmpdir(), 'dm-input-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const nestedArrays = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const nestedObjects = (levels: number) => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
const PROTO_ARGS = '{"__proto__": {"x": 1}, "constructor": "y", "thought": "why", "command": "ls"}';

describe('nestedDeeperThan / parseJson', () => {
  const cases: [string, string, boolean][] = [
    ['a scalar', '"x"', false],
    ['an empty object is one level', '{}', false],
    ['arrays at the limit', nestedArrays(MAX_JSON_DEPTH), false],
    ['arrays one past the limit', nestedArrays(MAX_JSON_DEPTH + 1), true],
    ['objects at the limit', nestedObjects(MAX_JSON_DEPTH), false],
    ['objects one past the limit', nestedObjects(MAX_JSON_DEPTH + 1), true],
    // Deep enough that any recursive walk (JSON.stringify, stable stringify, structured clone) overflows.
    ['a million levels', nestedArrays(1_000_000), true],
    ['a wide flat value is shallow', JSON.stringify(Array.from({ length: 100_000 }, (_, i) => ({ i }))), false],
    ['deep inside the last element of a wide list', `[${'1,'.repeat(1000)}${nestedArrays(MAX_JSON_DEPTH)}]`, true],
  ];
  it.each(cases)('%s', (_name, text, deep) => {
    expect(nestedDeeperThan(JSON.parse(text))).toBe(deep);
    if (deep) expect(() => parseJson(text, 'x')).toThrow(new BadValue(`x: JSON nested deeper than ${MAX_JSON_DEPTH} levels (the limit)`));
    else expect(() => parseJson(text, 'x')).not.toThrow();
  });

  it('too-deep tool-call arguments are a bad value, not malformed arguments', () => {
    const tally = { malformed_arguments: 0, unknown_roles: 0 };
    const call = { id: 'c', type: 'function', function: { name: 'execute_bash', arguments: nestedArrays(100_000) } };
    expect(() => normaliseToolCall(call, tally)).toThrow(/tool_calls\[\]\.function\.arguments: JSON nested deeper than 1000 levels/);
    expect(tally.malformed_arguments).toBe(0);
  });
});

describe('keys named like Object.prototype members are data', () => {
  const keys = new Set(DEFAULT_REASONING_KEYS);
  const cases: [string, string, string][] = [
    ['__proto__ and constructor kept, reasoning key removed', PROTO_ARGS, '{"__proto__":{"x":1},"command":"ls","constructor":"y"}'],
    ['a flat __proto__ value', '{"__proto__": "p", "b": 1}', '{"__proto__":"p","b":1}'],
    ['__proto__ nested below the top level', '{"a": {"__proto__": {"y": 2}}}', '{"a":{"__proto__":{"y":2}}}'],
    ['hasOwnProperty and toString as keys', '{"toString": 1, "hasOwnProperty": 2}', '{"hasOwnProperty":2,"toString":1}'],
    ['a toJSON key that is not a function', '{"toJSON": "t", "k": 0}', '{"k":0,"toJSON":"t"}'],
  ];
  it.each(cases)('canonArguments: %s', (_name, text, canon) => {
    expect(canonArguments(JSON.parse(text), keys)).toBe(canon);
  });

  it('canonArguments tells apart arguments that differ only under __proto__', () => {
    expect(canonArguments(JSON.parse('{"__proto__": {"x": 1}}'), keys)).not.toBe(canonArguments(JSON.parse('{"__proto__": {"x": 2}}'), keys));
  });

  it('stripNulls (trl tools) keeps a __proto__ key', () => {
    expect(JSON.stringify(stripNulls(JSON.parse('{"__proto__": {"a": null, "b": 1}, "c": null}')))).toBe('{"__proto__":{"b":1}}');
  });
});

// ---- end to end -------------------------------------------------------------------------------

type Row = { trajectory_id: string; instance_id: string; resolved: number; trajectory: { role: string; tool_calls: unknown }[] } & Record<string, unknown>;
const FORKS = readFileSync(join(ROOT, 'fixtures', 'forks.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Row);
/** A real resolved row cut to 6 messages (system, user, assistant, tool, assistant, tool) under a new instance. */
function baseRow(instance: string, id: string, resolved: number): Row {
  const r = structuredClone(FORKS.find((x) => x.trajectory_id.startsWith('chatcmpl-eb27c5fe3ba'))!);
  r.trajectory = r.trajectory.slice(0, 6);
  return { ...r, instance_id: instance, trajectory_id: id, resolved };
}
function setArguments(r: Row, index: number, args: string): Row {
  const calls = r.trajectory[index]!.tool_calls as { function: { arguments: string } }[];
  calls[0]!.function.arguments = args;
  return r;
}
function writeRows(name: string, rows: Row[]): string {
  const p = join(dir, name);
  writeFileSync(p, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return p;
}
function mine(args: string[]) {
  const out = join(dir, `out-${Math.random().toString(36).slice(2)}.jsonl`);
  const r = spawnSync(process.execPath, [BIN, 'mine', ...args, '--out', out, '--workers', '1', '-q'], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stderr: r.stderr, out, rows: existsSync(out) ? readFileSync(out, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : null };
}
function expectCleanError(r: ReturnType<typeof mine>, code: number, pattern: RegExp) {
  expect(r.code, r.stderr).toBe(code);
  const lines = r.stderr.split('\n').filter(Boolean);
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
  expect(existsSync(r.out)).toBe(false);
  expect(readdirSync(dir).filter((f) => /\.tmp-/.test(f))).toEqual([]);
}

describe('JSON nested too deeply: exit 7 naming file, row and column (built CLI)', () => {
  const good = baseRow('deep__case-1', 'deep-resolved', 1);
  const deepArgs = setArguments(baseRow('deep__case-1', 'deep-failed', 0), 4, nestedArrays(200_000));

  it('tool-call arguments text (JSONL)', () => {
    const r = mine(['--jsonl', writeRows('deep-args.jsonl', [good, deepArgs])]);
    expectCleanError(r, 7, /deep-args\.jsonl:2: trajectory deep-failed: message 4: tool_calls\[\]\.function\.arguments: JSON nested deeper than 1000 levels \(the limit\) \(use --skip-bad-rows/);
  });

  it('--skip-bad-rows counts the row in bad_rows', () => {
    const stats = join(dir, 'deep-skip.stats.json');
    const r = mine(['--jsonl', writeRows('deep-skip.jsonl', [good, deepArgs]), '--skip-bad-rows', '--stats', stats]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(stats, 'utf8')).counters.bad_rows).toBe(1);
  });

  it('arguments at the limit are fine', () => {
    const atLimit = setArguments(baseRow('deep__case-1', 'deep-failed', 0), 4, `{"command": ${nestedArrays(MAX_JSON_DEPTH - 1)}}`);
    const r = mine(['--jsonl', writeRows('deep-limit.jsonl', [good, atLimit])]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.rows).toHaveLength(1);
  });

  it('a JSONL line whose column nests too deeply (arguments as objects)', () => {
    const row = baseRow('deep__case-1', 'deep-object', 0) as Row & { trajectory: Record<string, unknown>[] };
    const text = JSON.stringify(good) + '\n' + JSON.stringify(row).replace('"tool_calls":null', `"tool_calls":null,"extra":${nestedArrays(200_000)}`) + '\n';
    const p = join(dir, 'deep-line.jsonl');
    writeFileSync(p, text);
    expectCleanError(mine(['--jsonl', p]), 7, /deep-line\.jsonl:2: column trajectory: JSON nested deeper than 1000 levels \(the limit\)$/);
  });

  it('a messages column given as JSON text (Open-SWE-Traces layout)', () => {
    const rows = [good, baseRow('deep__case-1', 'deep-text', 0)].map(({ trajectory, ...rest }) => ({ ...rest, messages: JSON.stringify(trajectory) }));
    rows[1]!.messages = `[${nestedArrays(200_000)}]`;
    const p = join(dir, 'deep-text.jsonl');
    writeFileSync(p, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    expectCleanError(mine(['--jsonl', p]), 7, /deep-text\.jsonl:2: trajectory deep-text: messages: JSON nested deeper than 1000 levels/);
  });
});

describe('"__proto__" and "constructor" argument keys survive end to end (built CLI)', () => {
  // Three attempts that differ only in the value under "__proto__" or "constructor": with either key
  // lost, the keys of message 4 would be equal and the pair would have no divergence.
  const rows = [
    setArguments(baseRow('proto__case-1', 'proto-resolved', 1), 4, PROTO_ARGS),
    setArguments(baseRow('proto__case-1', 'proto-failed-p', 0), 4, PROTO_ARGS.replace('"x": 1', '"x": 2')),
    setArguments(baseRow('proto__case-1', 'proto-failed-c', 0), 4, PROTO_ARGS.replace('"y"', '"z"')),
  ];
  const input = () => writeRows('proto.jsonl', rows);

  it('published shape: both pairs diverge at message 4 and tool_calls keeps every key', () => {
    const r = mine(['--jsonl', input(), '--min-similarity-skip', '1']);
    expect(r.code, r.stderr).toBe(0);
    const byId = new Map(r.rows!.map((x) => [x.rejected_trajectory_id, x]));
    expect([...byId.keys()].sort()).toStrictEqual(['proto-failed-c', 'proto-failed-p']);
    for (const x of byId.values()) expect(x.divergence_msg_index).toBe(4);
    expect(byId.get('proto-failed-p').rejected.tool_calls).toContain('"arguments":{"__proto__":{"x":2},"constructor":"y","thought":"why","command":"ls"}');
    expect(byId.get('proto-failed-c').rejected.tool_calls).toContain('"arguments":{"__proto__":{"x":1},"constructor":"z","thought":"why","command":"ls"}');
    expect(byId.get('proto-failed-p').chosen.tool_calls).toContain('"arguments":{"__proto__":{"x":1},"constructor":"y","thought":"why","command":"ls"}');
  });

  it('trl shape: the arguments objects hold both keys as own keys', () => {
    const r = mine(['--jsonl', input(), '--min-similarity-skip', '1', '--shape', 'trl']);
    expect(r.code, r.stderr).toBe(0);
    const x = r.rows!.find((row) => row.rejected_trajectory_id === 'proto-failed-p');
    const args = x.rejected[0].tool_calls[0].function.arguments;
    expect(Object.keys(args)).toStrictEqual(['__proto__', 'constructor', 'thought', 'command']);
    expect(JSON.stringify(args)).toBe('{"__proto__":{"x":2},"constructor":"y","thought":"why","command":"ls"}');
  });
});

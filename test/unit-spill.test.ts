// Round trip of src/engine/encode.ts (encodeTrajectory) through src/engine/spill.ts (SpillWriter / SpillReader):
// what the streaming pipeline reads back from the spill must be exactly the emitted message
// (contract section 6) and the action signature (contract section 3) of the in-memory path.
//
// Real message shapes and texts below are copied (some contents shortened, marked "excerpt") from
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius
// (Trofimova et al., "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius blog, 2025).
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { emitMessage } from '../src/contract/emit.js';
import { encodeTrajectory, roleCode, type SignatureScheme } from '../src/engine/encode.js';
import { Utf8Bytes } from '../src/parquet/utf8-bytes.js';
import { HASH_BYTES, keyHash, wtf8 } from '../src/engine/key-hash.js';
import { normaliseMessage, type NormaliseTally } from '../src/contract/normalise.js';
import { ROLE_CODES } from '../src/engine/protocol.js';
import { actionSignature, DEFAULT_REASONING_KEYS, keyAndSignature } from '../src/contract/sign.js';
import { TEXT_ACTION_SCHEMES, textActionsKeyAndSignature } from '../src/sources/text-actions.js';
import { decodeRecord, decodeSignature, emittedHash, recordKeyHash, SpillReader, SpillWriter, writeRecordJson } from '../src/engine/spill.js';
import { JsonBytes } from '../src/engine/json-bytes.js';
import type { ToolCall } from '../src/types.js';

const DEFAULT = new Set(DEFAULT_REASONING_KEYS);
const dir = mkdtempSync(join(tmpdir(), 'dm-unit-spill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;
const spillPath = () => join(dir, `spill-${fileNo++}.bin`);
const tally = (): NormaliseTally => ({ malformed_arguments: 0, unknown_roles: 0 });
// Contract 9.9: keys are hashed as their WTF-8 (key-hash.ts), which is UTF-8 for well-formed keys.
const sha16 = (bytes: Buffer) => createHash('sha256').update(bytes).digest().subarray(0, 16);
/** writeRecordJson of the record at 0 in `b`, and where it says the record ends. */
const recordJson = (b: Buffer): { json: string; end: number } => {
  const out = new JsonBytes(16);
  const end = writeRecordJson(b, 0, out);
  return { json: Buffer.from(out.take()).toString('utf8'), end };
};

// --- real upstream values (CC-BY-4.0 © Nebius) -------------------------------------------------
const THINK_ARGS = String.raw`{"thought": "Let me search for relevant files and methods. The issue is about the Variable class inheriting from xarray.DataArray and having problems with the diff method. I need to:\n\n1. Look at the Variable class definition\n2. Understand how it inherits from xarray.DataArray\n3. See what happens when diff is called on a Variable\n4. Find where constraints are processed\n5. Understand how the diff operation affects the optimization\n\nLet me start by looking at the variables.py file since that's where the Variable class should be defined."}`;
const PYTEST_PADDED =
  'numpydoc/tests/test_docscrape.py::test_str PASSED' + ' '.repeat(767) + '\n' +
  '[... Observation truncated due to length ...]\n' +
  '[Command finished with exit code 0]';
// Row numpy__numpydoc-101, message 130 (excerpt): the finish call's narration carries emoji (4-byte UTF-8).
const FINISH_NARRATION = 'Excellent! All tests pass.\n\n### \u2705 **Issue Resolution**\n\n### \ud83d\udd27 **Technical Implementation**';
const TRAJECTORY = [
  { content: 'You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.', name: null, role: 'system', tool_call_id: null, tool_calls: null },
  { content: 'Fix the issue.\r\nThanks  ', name: null, role: 'user', tool_call_id: null, tool_calls: null },
  {
    content: "There's one failing test, but it's unrelated to our issue. Let me proceed to Phase 3.\n\n## Phase 3. EXPLORATION: Finding Related Files\n\n",
    name: null,
    role: 'assistant',
    tool_call_id: null,
    tool_calls: [{ function: { arguments: THINK_ARGS, name: 'think' }, id: 'chatcmpl-tool-be1e45884ad7426fb5d4e5c3f869f6a2', type: 'function' }],
  },
  { content: 'Your thought has been logged.', name: 'think', role: 'tool', tool_call_id: 'chatcmpl-tool-be1e45884ad7426fb5d4e5c3f869f6a2', tool_calls: null },
  {
    content: '',
    name: null,
    role: 'assistant',
    tool_call_id: null,
    tool_calls: [
      { function: { arguments: '{"command": "cd /workspace/numpy__numpydoc__0.7 && python -m pytest numpydoc/tests/ -v"}', name: 'execute_bash' }, id: 'chatcmpl-tool-0e5ce2b0dc2743e9a9df13b80a84155b', type: 'function' },
      { function: { arguments: '{"command": "ls', name: 'execute_bash' }, id: 'malformed-1', type: 'function' },
    ],
  },
  { content: PYTEST_PADDED, name: 'execute_bash', role: 'tool', tool_call_id: 'chatcmpl-tool-0e5ce2b0dc2743e9a9df13b80a84155b', tool_calls: null },
  { content: 'Be brief.', name: null, role: 'developer', tool_call_id: null, tool_calls: null },
  {
    content: FINISH_NARRATION,
    name: null,
    role: 'assistant',
    tool_call_id: null,
    tool_calls: [{ function: { arguments: '{"message": "caf\\u00e9 \u2705"}', name: 'finish' }, id: 'chatcmpl-tool-finish', type: 'function' }],
  },
  { content: 'Done. \u00e9\u00e8', name: null, role: 'assistant', tool_call_id: null, tool_calls: 'None' },
];

describe('roleCode', () => {
  const cases: [string, number][] = [
    ['system', 0],
    ['user', 1],
    ['assistant', 2],
    ['tool', 3],
    ['developer', 4],
    ['other', 4],
  ];
  it.each(cases)('%s -> %i', (role, code) => {
    expect(roleCode(role)).toBe(code);
  });

  // `role in ROLE_CODES` would also see Object.prototype: an unknown role named like a prototype
  // member must still be "other" (contract section 2: "any other role").
  it.each(['constructor', 'toString', '__proto__'])('prototype member name %s -> other (4)', (role) => {
    expect(roleCode(role)).toBe(ROLE_CODES.other);
  });
});

describe('keyHash', () => {
  // WTF-8 written out by hand: UTF-8 for well-formed text, a lone surrogate as the 3 bytes of its code point.
  const wtf8Cases: [string, string, number[]][] = [
    ['ASCII', 'tool\nthink\nYour thought has been logged.', [...Buffer.from('tool\nthink\nYour thought has been logged.', 'latin1')]],
    ['two-byte and four-byte characters', 'text \u00e9\u{1F527}', [0x74, 0x65, 0x78, 0x74, 0x20, 0xc3, 0xa9, 0xf0, 0x9f, 0x94, 0xa7]],
    ['a lone high surrogate', 'a\ud800b', [0x61, 0xed, 0xa0, 0x80, 0x62]],
    ['a lone low surrogate at the end', 'a\udfff', [0x61, 0xed, 0xbf, 0xbf]],
    ['a reversed pair', '\udc00\ud800', [0xed, 0xb0, 0x80, 0xed, 0xa0, 0x80]],
    ['a pair after a lone high surrogate', '\ud83d\ud83d\udd27', [0xed, 0xa0, 0xbd, 0xf0, 0x9f, 0x94, 0xa7]],
  ];
  it.each(wtf8Cases)('%s: the first 16 bytes of the SHA-256 of the key\'s WTF-8', (_name, key, bytes) => {
    expect(HASH_BYTES).toBe(16);
    expect(wtf8(key)).toEqual(Buffer.from(bytes));
    expect(Buffer.from(keyHash(key)).equals(sha16(Buffer.from(bytes)))).toBe(true);
    expect(Buffer.from(keyHash([key.slice(0, 1), key.slice(1)])).equals(sha16(Buffer.from(bytes)))).toBe(true);
  });

  // Keys that differ only in lone surrogates are different JavaScript strings (contract 9.9); UTF-8
  // maps every lone surrogate to U+FFFD, so a v1 UTF-8 hash gives each pair below one hash.
  const distinct: [string, string, string][] = [
    ['a lone high vs a lone low surrogate', 'tool\nx\n\ud800', 'tool\nx\n\udc00'],
    ['two different lone high surrogates', 'text \ud83d', 'text \ud83e'],
    ['a lone surrogate vs U+FFFD itself', 'text \ud800', 'text \ufffd'],
    ['a reversed pair vs two U+FFFD', 'text \udc00\ud800', 'text \ufffd\ufffd'],
  ];
  it.each(distinct)('%s: different hashes', (_name, a, b) => {
    expect(Buffer.from(a, 'utf8').equals(Buffer.from(b, 'utf8'))).toBe(true); // what UTF-8 would hash
    expect(Buffer.from(keyHash(a)).equals(keyHash(b))).toBe(false);
  });

  // The spill hashes a key piece by piece: the hash must depend on the whole string only, also when
  // a surrogate pair is split between two pieces.
  const splits: [string, string[]][] = [
    ['plain pieces', ['tool\n', 'execute_bash', '\n', 'ok']],
    ['a surrogate pair split between two pieces', ['text \ud83d', '\udd27 done']],
    ['an empty piece', ['assistant\n', '', 'text x']],
  ];
  it.each(splits)('%s: same hash as the joined key', (_name, parts) => {
    expect(Buffer.from(keyHash(parts)).equals(keyHash(parts.join('')))).toBe(true);
  });
});

describe('encodeTrajectory + SpillWriter/SpillReader round trip', () => {
  const path = spillPath();
  const writer = new SpillWriter(path);
  writer.append('an earlier trajectory \u2705'); // 22 ASCII bytes + 3 for U+2705 = 25 bytes: the encoded trajectory starts after it
  const t = tally();
  const enc = encodeTrajectory(41, TRAJECTORY, DEFAULT, t, writer);
  const endOfFirst = writer.offset;
  const enc2 = encodeTrajectory(42, TRAJECTORY.slice(0, 3), DEFAULT, t, writer);
  writer.close();
  const reader = new SpillReader();
  const norm = TRAJECTORY.map((m) => normaliseMessage(m, tally()));
  const n = TRAJECTORY.length;
  /** Message i's record of trajectory `e`: the emitted message and the signature. */
  const record = (e: typeof enc, i: number) => {
    const b = reader.readBytes(path, e.offsets[i]!, e.offsets[i + 1]!);
    const r = decodeRecord(b, 0);
    expect(r.end).toBe(b.length);
    return { message: r.message, signature: decodeSignature(b, 0), emitted: emittedHash(b, 0).toString('hex'), key: recordKeyHash(b, 0) };
  };

  it('writeRecordJson writes JSON.stringify of each decoded record, from its bytes', () => {
    for (const e of [enc, enc2]) {
      for (let i = 0; i < e.roles.length; i++) {
        const b = reader.readBytes(path, e.offsets[i]!, e.offsets[i + 1]!);
        expect(recordJson(b)).toEqual({ json: JSON.stringify(decodeRecord(b, 0).message), end: b.length });
      }
    }
  });

  it('key, roles, and one record per message', () => {
    expect(enc.key).toBe(41);
    expect(enc.bad).toBeUndefined();
    expect([...enc.roles]).toStrictEqual([0, 1, 2, 3, 2, 3, 4, 2, 2]);
    expect(enc.offsets.length).toBe(n + 1);
  });

  const keys: [number, string][] = [
    [0, 'system\nYou are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.'],
    [1, 'user\nFix the issue.\nThanks'],
    [2, 'assistant\nthink {}'],
    [3, 'tool\nthink\nYour thought has been logged.'],
    [4, 'assistant\nexecute_bash {"command":"cd /workspace/numpy__numpydoc__0.7 && python -m pytest numpydoc/tests/ -v"}\nexecute_bash {"command": "ls'],
    [5, 'tool\nexecute_bash\nnumpydoc/tests/test_docscrape.py::test_str PASSED\n[... Observation truncated due to length ...]\n[Command finished with exit code 0]'],
    [6, 'developer\nBe brief.'],
    [7, 'assistant\nfinish {"message":"café \u2705"}'],
    [8, 'assistant\ntext Done. \u00e9\u00e8'],
  ];
  it.each(keys)('the key hash of record %i is SHA-256[0..16) of its comparison key', (i, key) => {
    expect(record(enc, i).key.equals(sha16(Buffer.from(key, 'utf8')))).toBe(true);
  });

  it('byte offsets: start after what the spill already held, end at the writer offset', () => {
    expect(enc.offsets[0]).toBe(25);
    for (let k = 1; k < enc.offsets.length; k++) expect(enc.offsets[k]!).toBeGreaterThanOrEqual(enc.offsets[k - 1]!);
    expect(enc.offsets[n]).toBe(endOfFirst);
    expect(enc2.offsets[0]).toBe(endOfFirst);
    expect(enc2.offsets[3]).toBe(statSync(path).size);
  });

  it.each(TRAJECTORY.map((_, i) => i))('message %i reads back as emitMessage(normalised), key order included', (i) => {
    expect(JSON.stringify(record(enc, i).message)).toBe(JSON.stringify(emitMessage(norm[i]!)));
  });

  it.each(TRAJECTORY.map((_, i) => i))('signature %i reads back as actionSignature (assistant) or empty', (i) => {
    const sig = record(enc, i).signature;
    const m = norm[i]!;
    expect(sig).toBe(m.role === 'assistant' ? actionSignature(m as { content: string | null; tool_calls: ToolCall[] | null }, DEFAULT) : '');
  });

  const literal: [number, unknown, string][] = [
    [1, { role: 'user', content: 'Fix the issue.\r\nThanks  ' }, ''],
    [5, { role: 'tool', content: PYTEST_PADDED, name: 'execute_bash', tool_call_id: 'chatcmpl-tool-0e5ce2b0dc2743e9a9df13b80a84155b' }, ''],
    [6, { role: 'developer', content: 'Be brief.' }, ''],
    [
      7,
      {
        role: 'assistant',
        content: FINISH_NARRATION,
        tool_calls: '[{"id":"chatcmpl-tool-finish","type":"function","function":{"name":"finish","arguments":{"message":"café \u2705"}}}]',
      },
      'finish {"message":"café \u2705"}',
    ],
    [8, { role: 'assistant', content: 'Done. \u00e9\u00e8', tool_calls: null }, 'text Done. \u00e9\u00e8'],
    [
      4,
      {
        role: 'assistant',
        content: '',
        tool_calls:
          '[{"id":"chatcmpl-tool-0e5ce2b0dc2743e9a9df13b80a84155b","type":"function","function":{"name":"execute_bash","arguments":{"command":"cd /workspace/numpy__numpydoc__0.7 && python -m pytest numpydoc/tests/ -v"}}},' +
          String.raw`{"id":"malformed-1","type":"function","function":{"name":"execute_bash","arguments":"{\"command\": \"ls"}}]`,
      },
      'execute_bash {"command":"cd /workspace/numpy__numpydoc__0.7 && python -m pytest numpydoc/tests/ -v"}\nexecute_bash {"command": "ls',
    ],
  ];
  it.each(literal)('message %i: literal emitted message and signature', (i, emitted, sig) => {
    expect(record(enc, i).message).toStrictEqual(emitted);
    expect(record(enc, i).signature).toBe(sig);
  });

  it('the second trajectory reads back too', () => {
    for (let i = 0; i < 3; i++) expect(JSON.stringify(record(enc2, i).message)).toBe(JSON.stringify(emitMessage(norm[i]!)));
    for (let i = 0; i < 3; i++) expect(record(enc2, i).key.equals(record(enc, i).key)).toBe(true);
    for (let i = 0; i < 3; i++) expect(record(enc2, i).emitted).toBe(record(enc, i).emitted);
  });

  it('emitted hashes: one per distinct emitted message (the exact-duplicate check)', () => {
    const distinct = new Set(Array.from({ length: n }, (_, i) => record(enc, i).emitted));
    expect(distinct.size).toBe(new Set(norm.map((m) => JSON.stringify(emitMessage(m)))).size);
  });

  it('tally: malformed calls and unknown roles of both trajectories', () => {
    expect(t).toStrictEqual({ malformed_arguments: 1, unknown_roles: 1 });
  });

  it('reading an empty range gives "" and reading past the end throws', () => {
    expect(reader.read(path, 10, 10)).toBe('');
    const size = statSync(path).size;
    expect(() => reader.read(path, size - 2, size + 5)).toThrow(/shorter than expected/);
    reader.close();
  });
});

// The reader hands long contents over as their UTF-8 (src/parquet/utf8-bytes.ts): encodeTrajectory
// spills those bytes without decoding them. The spill must be byte for byte the one of the same
// trajectory read as strings, whatever the role and the signature scheme; an assistant reply without
// tool calls is signed by its content, so that content is read.
describe('encodeTrajectory: contents given as UTF-8 bytes spill as the same records', () => {
  const asBytes = (value: readonly unknown[]) =>
    value.map((m) => {
      const c = (m as { content?: unknown }).content;
      return typeof c === 'string' ? { ...(m as object), content: Utf8Bytes.of(Buffer.from(c, 'utf8')) } : m;
    });
  const spilled = (value: unknown, scheme: SignatureScheme) => {
    const path = spillPath();
    const w = new SpillWriter(path);
    const t = tally();
    const e = encodeTrajectory(7, value, DEFAULT, t, w, scheme);
    w.close();
    return { e, t, bytes: readFileSync(path) };
  };
  const WITH_BAD_ROLE = [...TRAJECTORY.slice(0, 2), { role: 7, content: 'Fix it' }];
  const cases: { name: string; value: readonly unknown[]; scheme: SignatureScheme }[] = [
    { name: 'every role of the real rows', value: TRAJECTORY, scheme: 'contract' },
    ...(Object.keys(TEXT_ACTION_SCHEMES) as (keyof typeof TEXT_ACTION_SCHEMES)[]).map((scheme) => ({ name: `text actions (${scheme})`, value: TRAJECTORY, scheme })),
    { name: 'a message with a role that is not a string', value: WITH_BAD_ROLE, scheme: 'contract' },
  ];
  it.each(cases)('$name', ({ value, scheme }) => {
    const text = spilled(value, scheme);
    const bytes = spilled(asBytes(value), scheme);
    expect(bytes.bytes.equals(text.bytes)).toBe(true);
    expect(bytes.e).toStrictEqual(text.e);
    expect(bytes.t).toStrictEqual(text.t);
  });

  it('the text-only reply is signed by its content, given as bytes', () => {
    const reply = { role: 'assistant', content: Utf8Bytes.of(Buffer.from('Done. \u00e9\u00e8')), tool_calls: null };
    const { bytes } = spilled([reply], 'contract');
    expect(decodeSignature(bytes, 0)).toBe('text Done. \u00e9\u00e8');
    expect(decodeRecord(bytes, 0).message).toStrictEqual({ role: 'assistant', content: 'Done. \u00e9\u00e8', tool_calls: null });
  });

  it('the messages given are not changed', () => {
    const value = asBytes(TRAJECTORY);
    const before = value.map((m) => ({ ...(m as object) }));
    spilled(value, 'contract');
    expect(value).toStrictEqual(before);
  });
});

describe('encodeTrajectory: bad trajectories', () => {
  const cases: { name: string; value: unknown; bad: string }[] = [
    { name: 'null', value: null, bad: 'trajectory is null' },
    { name: 'not a list', value: { role: 'user' }, bad: 'trajectory is not a list' },
    {
      name: 'a message without role after a malformed call and an unknown role',
      value: [
        TRAJECTORY[0],
        { role: 'assistant', content: '', tool_calls: [{ id: 'a', type: 'function', function: { name: 'execute_bash', arguments: '{' } }] },
        { role: 'developer', content: 'x' },
        { content: 'no role' },
      ],
      bad: 'message 3: message role must be a non-empty string',
    },
  ];
  it.each(cases)('$name: marked bad, nothing spilled, nothing counted', ({ value, bad }) => {
    const path = spillPath();
    const w = new SpillWriter(path);
    const t = tally();
    const enc = encodeTrajectory(7, value, DEFAULT, t, w);
    expect(enc.key).toBe(7);
    expect(enc.bad).toBe(bad);
    expect(enc.roles.length + enc.offsets.length).toBe(0);
    expect(w.offset).toBe(0);
    expect(t).toStrictEqual({ malformed_arguments: 0, unknown_roles: 0 });
    w.close();
    expect(statSync(path).size).toBe(0);
  });

  it('an empty trajectory is not bad: no messages, one offset', () => {
    const w = new SpillWriter(spillPath());
    const enc = encodeTrajectory(1, [], DEFAULT, tally(), w);
    expect(enc.bad).toBeUndefined();
    expect([...enc.offsets]).toStrictEqual([0]);
    w.close();
  });
});

describe('SpillWriter', () => {
  it('returns UTF-8 byte end offsets', () => {
    const path = spillPath();
    const w = new SpillWriter(path);
    expect(w.append('é')).toBe(2);
    expect(w.append('')).toBe(2);
    expect(w.append('\ud83d\udd27')).toBe(6);
    w.close();
    expect(statSync(path).size).toBe(6);
  });

  it('survives a flush in the middle (more than 1 MiB pending)', () => {
    const path = spillPath();
    const w = new SpillWriter(path);
    const big = 'a'.repeat(1_500_000);
    const e1 = w.append(big);
    const e2 = w.append('tail\u2705');
    w.close();
    const r = new SpillReader();
    expect(e1).toBe(1_500_000);
    expect(e2).toBe(1_500_007);
    expect(r.read(path, e1, e2)).toBe('tail\u2705');
    expect(r.read(path, e1 - 3, e1 + 4)).toBe('aaatail');
    r.close();
  });
});

describe('strings with lone surrogates read back unchanged (contract 9.9)', () => {
  const cases: [string, unknown][] = [
    ['user content', { role: 'user', content: 'progress \ud800 50%' }],
    ['tool name and call id', { role: 'tool', content: 'ok\udc00', name: 'n\ud83d', tool_call_id: 'id\udfff' }],
    ['tool-call arguments (signature and tool_calls)', { role: 'assistant', content: 'c\ud800', tool_calls: [{ id: 'i', type: 'function', function: { name: 'f\udc00', arguments: { command: 'echo \ud800' } } }] }],
    ['text-only assistant reply (signature)', { role: 'assistant', content: 'done \udbff', tool_calls: null }],
    ['a well-formed pair next to a lone surrogate', { role: 'user', content: '\ud83d\udd27 \ud83d' }],
    // A string is scanned for a lone surrogate only when its UTF-8 holds U+FFFD (spill.ts writeText).
    ['a lone surrogate and nothing else (3 bytes of UTF-8)', { role: 'tool', content: '\udc00', name: '\ud800', tool_call_id: '\udbff' }],
    ['U+FFFD itself, then a lone surrogate', { role: 'user', content: 'bad byte \ufffd then \ud800' }],
    ['U+FFFD alone: well-formed, kept as UTF-8', { role: 'user', content: '\ufffd' }],
  ];
  it.each(cases)('%s', (_name, raw) => {
    const path = spillPath();
    const w = new SpillWriter(path);
    const e = encodeTrajectory(0, [raw], DEFAULT, tally(), w);
    w.close();
    const reader = new SpillReader();
    const b = reader.readBytes(path, e.offsets[0]!, e.offsets[1]!);
    reader.close();
    const m = normaliseMessage(raw as Record<string, unknown>, tally());
    expect(JSON.stringify(decodeRecord(b, 0).message)).toBe(JSON.stringify(emitMessage(m)));
    // Fields kept as UTF-16LE go by their text; the others by their bytes.
    expect(recordJson(b).json).toBe(JSON.stringify(emitMessage(m)));
    expect(decodeSignature(b, 0)).toBe(m.role === 'assistant' ? actionSignature(m as { content: string | null; tool_calls: ToolCall[] | null }, DEFAULT) : '');
  });
});

// The walk hashes comparison keys from spill records (spill.ts recordKeyHash) instead of from the
// normalised message: both must give the same hash for every role, scheme and encoding.
describe('recordKeyHash: the key hash of a spilled message is that of its normalised message', () => {
  const bigArgs = { command: `cat <<'EOF'\n${'x = 1  \n'.repeat(200_000)}EOF` }; // a 1.8 MB signature: hashed by a stream
  const cases: [string, unknown, 'contract' | 'text-actions' | 'swe-smith'][] = [
    ['system', TRAJECTORY[0], 'contract'],
    ['user with CRLF and trailing blanks', TRAJECTORY[1], 'contract'],
    ['assistant tool call with a thought', TRAJECTORY[2], 'contract'],
    ['tool result', TRAJECTORY[3], 'contract'],
    ['assistant with a malformed call', TRAJECTORY[4], 'contract'],
    ['padded tool output', TRAJECTORY[5], 'contract'],
    ['a role outside the four', TRAJECTORY[6], 'contract'],
    ['a role literally named other', { role: 'other', content: 'x ' }, 'contract'],
    ['tool result without name or content', { role: 'tool', content: null, name: null, tool_call_id: null }, 'contract'],
    ['assistant text reply', { role: 'assistant', content: 'Done.  \n', tool_calls: null }, 'contract'],
    ['a 1.8 MB call', { role: 'assistant', content: '', tool_calls: [{ id: 'b', type: 'function', function: { name: 'execute_bash', arguments: bigArgs } }] }, 'contract'],
    ['a 1.8 MB tool output', { role: 'tool', content: 'y  \r\n'.repeat(400_000), name: 'execute_bash', tool_call_id: 'b' }, 'contract'],
    ['lone surrogate in user content', { role: 'user', content: 'progress \ud800 50%' }, 'contract'],
    ['lone surrogates in a tool name and content', { role: 'tool', content: 'ok\udc00', name: 'n\ud83d', tool_call_id: 'id' }, 'contract'],
    ['lone surrogate in call arguments (UTF-16 signature)', { role: 'assistant', content: 'c', tool_calls: [{ id: 'i', type: 'function', function: { name: 'f', arguments: { command: 'echo \ud800' } } }] }, 'contract'],
    ['lone surrogate in a text reply', { role: 'assistant', content: 'done \udbff', tool_calls: null }, 'contract'],
    ['text-actions: a fenced bash block', { role: 'assistant', content: 'Let me look.\n```bash\nls -la  \n```', tool_calls: null }, 'text-actions'],
    ['swe-smith: an XML function call', { role: 'assistant', content: '<function=bash>\n<parameter=command>ls</parameter>\n</function>', tool_calls: null }, 'swe-smith'],
    ['text-actions: a user message', { role: 'user', content: ' task ' }, 'text-actions'],
    // Hashed from the record's bytes (norm keeps them) or from the text (it may not):
    ['user text with non-ASCII inside', { role: 'user', content: 'caf\u00e9 \u2705 ok' }, 'contract'],
    ['tool output ending in NBSP', { role: 'tool', content: 'ok\u00a0', name: 'execute_bash', tool_call_id: 'c' }, 'contract'],
    ['user text starting with U+2028', { role: 'user', content: '\u2028task' }, 'contract'],
    ['tool output with an empty name', { role: 'tool', content: 'ok', name: '', tool_call_id: 'c' }, 'contract'],
    ['tool output with a null name', { role: 'tool', content: 'ok', name: null, tool_call_id: 'c' }, 'contract'],
    ['empty system prompt', { role: 'system', content: '' }, 'contract'],
    ['null user content', { role: 'user', content: null }, 'contract'],
    ['a role with a non-ASCII name', { role: 'd\u00e9veloppeur', content: 'x' }, 'contract'],
    ['a role named like a tool result', { role: 'tool\nexecute_bash', content: 'ok' }, 'contract'],
  ];
  it.each(cases)('%s', (_name, raw, scheme) => {
    const path = spillPath();
    const w = new SpillWriter(path);
    w.append('before'); // the record does not start the file
    const e = encodeTrajectory(0, [raw], DEFAULT, tally(), w, scheme);
    w.close();
    const reader = new SpillReader();
    const b = reader.readBytes(path, 0, e.offsets[1]!);
    reader.close();
    const m = normaliseMessage(raw as Record<string, unknown>, tally());
    // The key by definition: sign.ts keyAndSignature, or its text-action drop-in.
    const key = scheme === 'contract' ? keyAndSignature(m, DEFAULT).key : textActionsKeyAndSignature(m, DEFAULT, TEXT_ACTION_SCHEMES[scheme]).key;
    expect(recordKeyHash(b, e.offsets[0]!).toString('hex')).toBe(keyHash(key).toString('hex'));
  });
  it('equal keys give equal hashes and different ones different hashes, whichever way each is hashed', () => {
    const hashOf = (raw: unknown) => {
      const path = spillPath();
      const w = new SpillWriter(path);
      const e = encodeTrajectory(0, [raw], DEFAULT, tally(), w);
      w.close();
      const reader = new SpillReader();
      const b = reader.readBytes(path, 0, e.offsets[1]!);
      reader.close();
      return recordKeyHash(b, 0).toString('hex');
    };
    // The contract's keys are strings: a role named "tool\nexecute_bash" keys as a tool result named
    // execute_bash with the same output, and the hashes from the records agree.
    expect(hashOf({ role: 'tool\nexecute_bash', content: 'ok' })).toBe(hashOf({ role: 'tool', content: 'ok', name: 'execute_bash', tool_call_id: 'c' }));
    expect(hashOf({ role: 'user', content: 'a\ud800' })).not.toBe(hashOf({ role: 'user', content: 'a\ud801' }));
    expect(hashOf({ role: 'user', content: 'a\ud800' })).not.toBe(hashOf({ role: 'user', content: 'a\ufffd' }));
  });
});

describe('emitted hashes tell apart exactly the emitted messages that differ', () => {
  const path = spillPath();
  const w = new SpillWriter(path);
  const reader = new SpillReader();
  const hashOf = (m: unknown) => {
    const e = encodeTrajectory(0, [m], DEFAULT, tally(), w);
    w.flush();
    return emittedHash(reader.readBytes(path, e.offsets[0]!, e.offsets[1]!), 0).toString('hex');
  };
  const base = { role: 'tool', content: 'ok', name: 'execute_bash', tool_call_id: 'call-1', tool_calls: null };
  it.each([
    ['content null vs ""', { ...base, content: null }, { ...base, content: '' }],
    ['name null vs ""', { ...base, name: null }, { ...base, name: '' }],
    ['a field boundary moved', { ...base, content: 'okexecute', name: '_bash' }, { ...base, content: 'ok', name: 'executebash' }],
    ['another call id', base, { ...base, tool_call_id: 'call-2' }],
    ['an unknown role vs another unknown role', { role: 'developer', content: 'x' }, { role: 'critic', content: 'x' }],
    ['user vs system', { role: 'user', content: 'x' }, { role: 'system', content: 'x' }],
    // Contract 9.9: stored as UTF-8, both would be "x\ufffd" (a v1 spill fails these).
    ['lone high vs lone low surrogate in content', { role: 'user', content: 'x\ud800' }, { role: 'user', content: 'x\udc00' }],
    ['a lone surrogate vs U+FFFD in a tool name', { ...base, name: 'a\ud800' }, { ...base, name: 'a\ufffd' }],
  ])('%s', (_, a, b) => {
    expect(hashOf(a)).not.toBe(hashOf(b));
  });
  it.each([
    // Fields that are not emitted do not count (contract section 6).
    ['a tool message with tool_calls set', base, { ...base, tool_calls: [] }],
    ['a user message with a name', { role: 'user', content: 'x', name: null }, { role: 'user', content: 'x', name: 'someone' }],
  ])('%s: same emitted message, same hash', (_, a, b) => {
    expect(hashOf(a)).toBe(hashOf(b));
  });
});

describe('keyHash of long pieces (hashed in 1 MiB slices)', () => {
  const oneShot = (s: string) => createHash('sha256').update(wtf8(s)).digest().subarray(0, HASH_BYTES);
  // Longer than two slices, with a surrogate pair split by a slice boundary and a lone surrogate.
  const long = 'a'.repeat((1 << 20) - 1) + '\u{1F600}' + 'b'.repeat(1 << 20) + '\uD800' + 'c'.repeat(17);
  // Well-formed and longer than the one-call buffer: hashed by slices, the pair across a slice end.
  const wellFormed = 'a'.repeat((1 << 20) - 1) + '\u{1F600}' + 'b'.repeat(1 << 20) + '\u00e9';
  it.each([
    ['one long well-formed piece', [wellFormed]],
    ['a short piece, then a long well-formed one', ['tool\n', wellFormed]],
    ['one long piece', [long]],
    ['a short piece, then a long one', ['tool\n', long]],
    ['a long piece split anywhere', [long.slice(0, 12345), long.slice(12345)]],
  ])('%s hashes as the WTF-8 of the joined key', (_name, parts) => {
    expect(keyHash(parts)).toEqual(oneShot(parts.join('')));
    expect(keyHash(parts)).toEqual(keyHash(parts.join('')));
  });
  it('a well-formed long key hashes as its UTF-8', () => {
    expect(keyHash([wellFormed])).toEqual(createHash('sha256').update(Buffer.from(wellFormed, 'utf8')).digest().subarray(0, HASH_BYTES));
  });
  it('a different last code unit gives a different hash', () => {
    expect(keyHash([wellFormed])).not.toEqual(keyHash([wellFormed.slice(0, -1) + 'd']));
    expect(keyHash([long])).not.toEqual(keyHash([long.slice(0, -1) + 'd']));
  });
});

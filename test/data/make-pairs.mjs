// Rebuilds test/data/pairs.jsonl and test/data/stats.json from the three real upstream rows
// (nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0, © Nebius; see README.md here).
// Every prompt and every chosen action is a real message; each rejected action is a real message
// of the same trajectory, or a real one lightly edited, so that the viewers meet realistic shapes:
// a turn-0 pair, a near-identical command, a multi-line edit with a small change, a text-only reply,
// a long file creation against a one-line command, and a premature `finish` with emoji in it.
//
//   node test/data/make-pairs.mjs [/path/to/nebius-openhands-sample.json]
import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import stringify from 'fast-json-stable-stringify';
import similarity from 'string-similarity';

const here = dirname(fileURLToPath(import.meta.url));
const samplePath = process.argv[2] ?? new URL('../../fixtures/source/nebius-openhands-sample.json', import.meta.url).pathname;
const rows = JSON.parse(readFileSync(samplePath, 'utf8'));
const byInstance = Object.fromEntries(rows.map((r) => [r.instance_id, r]));

/** Contract section 2 + 6: keep the role's fields; tool_calls as a JSON string with parsed arguments. */
function emit(m) {
  if (m.role === 'system' || m.role === 'user') return { role: m.role, content: m.content ?? null };
  if (m.role === 'tool') return { role: 'tool', content: m.content ?? null, name: m.name ?? null, tool_call_id: m.tool_call_id ?? null };
  const calls = (m.tool_calls ?? []).map((c) => {
    let args = c.function.arguments;
    try {
      args = JSON.parse(args);
    } catch {}
    return { id: c.id ?? null, type: c.type ?? null, function: { name: c.function.name ?? null, arguments: args } };
  });
  return { role: 'assistant', content: m.content ?? null, tool_calls: calls.length ? JSON.stringify(calls) : null };
}

const REASONING = ['thought', 'reasoning', 'think'];
function norm(s) {
  return (s ?? '').replace(/\r\n/g, '\n').replace(/[ \t]+$/gm, '').trim();
}
function signature(msg) {
  const calls = msg.tool_calls ? JSON.parse(msg.tool_calls) : [];
  if (!calls.length) return 'text ' + norm(msg.content);
  return calls
    .map((c) => {
      const a = c.function.arguments;
      if (typeof a === 'string') return c.function.name + ' ' + norm(a);
      const kept = Object.fromEntries(Object.entries(a).filter(([k]) => !REASONING.includes(k)));
      return c.function.name + ' ' + stringify(kept);
    })
    .join('\n');
}

function fakeId(seed) {
  return 'chatcmpl-' + createHash('sha256').update(seed).digest('hex').slice(0, 32);
}

function callMsg(content, name, args, idSeed) {
  const id = 'chatcmpl-tool-' + createHash('sha256').update(idSeed).digest('hex').slice(0, 32);
  return { role: 'assistant', content, tool_calls: JSON.stringify([{ id, type: 'function', function: { name, arguments: args } }]) };
}

function withArgs(msg, edit, content = msg.content) {
  const calls = JSON.parse(msg.tool_calls);
  calls[0].function.arguments = edit(structuredClone(calls[0].function.arguments));
  calls[0].id = calls[0].id.replace(/.{8}$/, 'deadbeef');
  return { ...msg, content, tool_calls: JSON.stringify(calls) };
}

function pair(instance, i, rejected) {
  const row = byInstance[instance];
  const traj = row.trajectory.map(emit);
  const chosen = traj[i];
  if (chosen.role !== 'assistant' || rejected.role !== 'assistant') throw new Error(`${instance}@${i}: not an assistant action`);
  const turn = traj.slice(0, i).filter((m) => m.role === 'assistant').length;
  return {
    prompt: traj.slice(0, i),
    chosen,
    rejected,
    instance_id: instance,
    repo: row.repo,
    chosen_trajectory_id: row.trajectory_id,
    rejected_trajectory_id: fakeId(`${instance}:failed:${i}`),
    divergence_turn: turn,
    divergence_msg_index: i,
    action_similarity: similarity.compareTwoStrings(signature(chosen), signature(rejected)),
  };
}

const A = 'tianocore__edk2-pytool-library-372';
const B = 'PyPSA__linopy-79';
const C = 'numpy__numpydoc-101';
const tA = byInstance[A].trajectory.map(emit);
const tB = byInstance[B].trajectory.map(emit);
const tC = byInstance[C].trajectory.map(emit);

const pairs = [
  // B: a small edit inside a long multi-line str_replace (new_str differs in two places, narration too).
  pair(
    B,
    82,
    withArgs(
      tB[82],
      (a) => ({
        ...a,
        // same docstring, a different (wrong) body: wrap xarray's diff like the other methods
        new_str: a.new_str
          .replace('The n-th order finite difference of this object.', 'The n-th order finite difference of this variable.')
          .replace(
            /        # For first-order difference[^]*?(?=\n\n    rename)/,
            '        # Delegate to xarray, as for roll and shift\n        return varwrap(DataArray.diff)(self, dim, n=n, label=label)',
          ),
      }),
      'Now let me add a `diff` method right after `roll`:\n\n',
    ),
  ),
  // B: a test run against a text-only message (no tool call).
  pair(B, 24, {
    role: 'assistant',
    content:
      'The tests are working. Since `Variable` inherits from `xarray.DataArray`, `diff` is already available,\n' +
      'so no change is needed here. I believe the issue is resolved.',
    tool_calls: null,
  }),
  // C: creating a long reproduction script against a one-line python -c command.
  pair(
    C,
    40,
    callMsg(
      'Let me reproduce the warning directly from the command line:\n\n',
      'execute_bash',
      { command: `cd /workspace/numpy__numpydoc__0.7 && python -c "from numpydoc.docscrape import NumpyDocString; NumpyDocString('Foo\\n\\nCustomsection\\n-------------\\nbar')"` },
      `${C}:40`,
    ),
  ),
  // C: the fix against a premature `finish` (real message from the end of the run, emoji included).
  pair(C, 52, tC[130]),
  // A: turn 0, a long `think` against exploring the workspace.
  pair(A, 2, tA[4]),
  // A: nearly the same pytest command (different target and flags).
  pair(
    A,
    14,
    withArgs(tA[14], (a) => ({
      ...a,
      command: 'cd /workspace/tianocore__edk2-pytool-library__0.15 && python -m pytest tests.unit/test_path_utilities.py -x -q | head -30',
    })),
  ),
];

writeFileSync(join(here, 'pairs.jsonl'), pairs.map((p) => JSON.stringify(p)).join('\n') + '\n');

const counters = {
  trajectories_read: 18,
  duplicate_trajectory_ids: 0,
  unlabelled: 1,
  bad_rows: 0,
  malformed_arguments: 0,
  unknown_roles: 0,
  instances: 4,
  eligible_instances: 3,
  trajectories_extracted: 12,
  pairs_walked: 14,
  no_divergence: 1,
  environment_divergence: 2,
  near_duplicate: 1,
  exact_duplicate: 2,
  capped: 2,
  pairs_emitted: pairs.length,
  divergence_turn_0: pairs.filter((p) => p.divergence_turn === 0).length,
};
const stats = {
  tool: 'divergence-mine',
  tool_version: '0.1.0',
  contract_version: 1,
  counters,
  options: { max_per_side: 3, max_pairs_per_instance: 4, min_similarity_skip: 0.95, seed: '0', reasoning_keys: REASONING, skip_bad_rows: false },
  inputs: [{ path: 'fixtures/trajectories.parquet', kind: 'parquet', bytes: 1234567 }],
};
writeFileSync(join(here, 'stats.json'), JSON.stringify(stats, null, 2) + '\n');
console.log(`wrote ${pairs.length} pairs`);

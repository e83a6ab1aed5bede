// Synthetic pairs files at scale (e.g. 5,000 rows, like the 5,420 of the real run) for the viewer
// tests and benchmarks. Message shapes come from test/data/pairs.jsonl, which is derived from real
// upstream rows (nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0, © Nebius): the system prompt,
// task statements, assistant actions (execute_bash, str_replace_editor, think, finish, text) and tool
// outputs are reused and lightly varied; ids, repos, turns and similarities are drawn from a seeded PRNG.
//
//   node test/data/synth-pairs.mjs 5000 /tmp/pairs.jsonl [seed]
import { createWriteStream, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 as prng } from '../support/prng.mjs';

const here = dirname(fileURLToPath(import.meta.url));


function loadPool() {
  const rows = readFileSync(join(here, 'pairs.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const pool = { system: [], user: [], assistant: [], tool: [] };
  const seen = new Set();
  for (const r of rows) {
    for (const m of [...r.prompt, r.chosen, r.rejected]) {
      const key = JSON.stringify(m);
      if (seen.has(key)) continue;
      seen.add(key);
      (pool[m.role] ?? (pool[m.role] = [])).push(m);
    }
  }
  return pool;
}

const OWNERS = ['django', 'pandas-dev', 'sympy', 'pytest-dev', 'astropy', 'psf', 'scikit-learn', 'matplotlib', 'pydata', 'sphinx-doc', 'numpy', 'PyPSA', 'tianocore', 'encode', 'pallets', 'pylint-dev', 'python-attrs', 'marshmallow-code', 'tox-dev', 'conan-io'];
const NAMES = ['core', 'utils', 'lint', 'docs', 'io', 'api', 'cli', 'parser', 'schema', 'plot', 'stats', 'solver', 'http', 'config', 'cache', 'toolkit', 'models', 'engine', 'format', 'graph'];

function cap(s, n) {
  return s && s.length > n ? s.slice(0, n) + '\n[... output truncated ...]' : s;
}

/** Vary an assistant action: new call id, and sometimes a slightly different command or path. */
function vary(msg, rnd, strength) {
  if (!msg.tool_calls) return { ...msg, content: msg.content };
  const calls = JSON.parse(msg.tool_calls).map((c) => {
    const args = typeof c.function.arguments === 'object' && c.function.arguments ? { ...c.function.arguments } : c.function.arguments;
    if (args && typeof args === 'object' && rnd() < strength) {
      if (typeof args.command === 'string' && c.function.name === 'execute_bash') {
        const tweaks = [' -x', ' -q', ' --tb=short', ' | head -50', ' 2>&1', ' -k diff'];
        args.command = args.command + tweaks[Math.floor(rnd() * tweaks.length)];
      } else if (typeof args.path === 'string') {
        args.path = args.path.replace(/(\.py)?$/, rnd() < 0.5 ? '_test.py' : '.py');
      } else if (typeof args.thought === 'string') {
        args.thought = args.thought.split('\n').slice(0, 3 + Math.floor(rnd() * 5)).join('\n');
      }
    }
    return { ...c, id: 'chatcmpl-tool-' + Math.floor(rnd() * 2 ** 52).toString(16).padStart(13, '0'), function: { ...c.function, arguments: args } };
  });
  return { role: 'assistant', content: msg.content, tool_calls: JSON.stringify(calls) };
}

function taskTracker(rnd) {
  const n = 2 + Math.floor(rnd() * 4);
  const task_list = Array.from({ length: n }, (_, i) => ({ id: String(i + 1), title: `Phase ${i + 1}: ${['read the issue', 'reproduce', 'fix', 'test', 'clean up'][i % 5]}`, status: rnd() < 0.5 ? 'done' : 'todo' }));
  return { role: 'assistant', content: 'Let me update the task list.', tool_calls: JSON.stringify([{ id: 'chatcmpl-tool-tt', type: 'function', function: { name: 'task_tracker', arguments: { command: 'plan', task_list } } }]) };
}

/** Yields `n` PairRows (contract JSONL shape). */
export function* synthPairs(n, seed = 1) {
  const rnd = prng(seed);
  const pool = loadPool();
  const pick = (arr) => arr[Math.floor(rnd() * arr.length)];
  const byTool = (name) => pool.assistant.filter((m) => m.tool_calls && JSON.parse(m.tool_calls)[0].function.name === name);
  const actions = {
    execute_bash: byTool('execute_bash'),
    str_replace_editor: byTool('str_replace_editor'),
    think: byTool('think'),
    finish: byTool('finish'),
    text: pool.assistant.filter((m) => !m.tool_calls),
  };
  // the real tool mix, roughly (execute_bash 52%, str_replace_editor 41%, think 4%, finish 2%, task_tracker 1%)
  const drawAction = () => {
    const u = rnd();
    if (u < 0.5) return pick(actions.execute_bash);
    if (u < 0.9) return pick(actions.str_replace_editor);
    if (u < 0.94) return pick(actions.think);
    if (u < 0.96) return pick(actions.finish);
    if (u < 0.975) return taskTracker(rnd);
    return pick(actions.text);
  };
  const repos = [];
  for (const o of OWNERS) for (const nm of NAMES) repos.push(`${o}/${o.toLowerCase().replace(/-dev$/, '')}-${nm}`);
  let row = 0;
  let instance = 0;
  while (row < n) {
    // Zipf-ish repo choice: a few repos hold many pairs
    const repo = repos[Math.min(repos.length - 1, Math.floor(repos.length * rnd() ** 2.5))];
    const id = `${repo.replace('/', '__')}-${100 + instance++}`;
    const perInstance = 1 + Math.floor(rnd() * 4);
    const system = pick(pool.system);
    const task = pick(pool.user);
    for (let k = 0; k < perInstance && row < n; k++, row++) {
      const turn = rnd() < 0.12 ? 0 : Math.min(60, 1 + Math.floor(-Math.log(1 - rnd()) * 10));
      const prompt = [system, { role: 'user', content: task.content.replace(/\/workspace\/[\w.-]+/g, `/workspace/${id}`) }];
      for (let t = 0; t < turn; t++) {
        const a = vary(drawAction(), rnd, 0.3);
        prompt.push(a);
        const tool = pick(pool.tool);
        const name = a.tool_calls ? JSON.parse(a.tool_calls)[0].function.name : tool.name;
        prompt.push({ role: 'tool', content: cap(tool.content, 4000), name, tool_call_id: a.tool_calls ? JSON.parse(a.tool_calls)[0].id : tool.tool_call_id });
      }
      const chosen = vary(drawAction(), rnd, 0.3);
      const near = rnd() < 0.3;
      const rejected = near ? vary(chosen, rnd, 1) : vary(drawAction(), rnd, 0.3);
      const sim = near ? 0.7 + rnd() * 0.249 : rnd() ** 1.6 * 0.9;
      yield {
        prompt,
        chosen,
        rejected,
        instance_id: id,
        repo,
        chosen_trajectory_id: 'chatcmpl-' + Math.floor(rnd() * 2 ** 52).toString(16) + row.toString(16),
        rejected_trajectory_id: 'chatcmpl-' + Math.floor(rnd() * 2 ** 52).toString(16) + (row + n).toString(16),
        divergence_turn: turn,
        divergence_msg_index: prompt.length,
        action_similarity: Math.round(sim * 1e6) / 1e6,
      };
    }
  }
}

/** Write `n` synthetic pairs as JSONL; resolves to the number of bytes written. */
export async function writeSynthPairs(path, n, seed = 1) {
  const out = createWriteStream(path);
  let bytes = 0;
  for (const p of synthPairs(n, seed)) {
    const line = JSON.stringify(p) + '\n';
    bytes += Buffer.byteLength(line);
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return bytes;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const n = Number(process.argv[2] ?? 5000);
  const path = process.argv[3] ?? 'pairs.synthetic.jsonl';
  const bytes = await writeSynthPairs(path, n, Number(process.argv[4] ?? 1));
  console.log(`wrote ${n} pairs to ${path} (${(bytes / 1048576).toFixed(1)} MiB)`);
}

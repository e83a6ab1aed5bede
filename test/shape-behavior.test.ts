// Behaviour labels of assistant turns (src/shapes/behavior.ts).
//
// The hand-labelled turns below are real turns of the three rows of
// nebius/SWE-rebench-openhands-trajectories kept in fixtures/sources/nebius-assistant-turns.json (every
// assistant message with its message index, long texts cut; built from
// fixtures/nebius-openhands-sample.json by fixtures/sources/build.mjs), CC-BY-4.0 © Nebius
// (Trofimova et al., "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius blog, 2025).
// The other fixtures in fixtures/sources/ are derived from the same rows.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  behaviorSequence,
  classifyShell,
  collapseRuns,
  labelTurns,
  parseShell,
  turnKind,
  type BehaviorLabel,
  type TurnInput,
  type TurnKind,
} from '../src/shapes/behavior.js';

const SAMPLE = new URL('../fixtures/nebius-openhands-sample.json', import.meta.url);
const F = '```';

type Turn = { index: number; content: string | null; tool_calls: unknown };
type Row = { trajectory_id: string; instance_id: string; messages: number; turns: Turn[] };
const fixture = JSON.parse(readFileSync(new URL('../fixtures/sources/nebius-assistant-turns.json', import.meta.url), 'utf8')) as { license: string; rows: Row[] };
const rows = fixture.rows;
const T = 'tianocore__edk2-pytool-library-372';
const P = 'PyPSA__linopy-79';
const N = 'numpy__numpydoc-101';
const assistants = (r: Row): TurnInput[] => r.turns.map((t) => ({ role: 'assistant', content: t.content, tool_calls: t.tool_calls }));

/** Label of the assistant message at `index` of a row, labelled over the whole trajectory. */
function labelAt(instance: string, index: number): BehaviorLabel {
  const row = rows.find((r) => r.instance_id === instance)!;
  const turn = row.turns.findIndex((t) => t.index === index);
  expect(turn).toBeGreaterThanOrEqual(0);
  return labelTurns(assistants(row))[turn]!;
}

describe('hand-labelled real turns (CC-BY-4.0 © Nebius)', () => {
  // [instance, message index, label, the action (abridged) and why]
  const cases: [string, number, BehaviorLabel, string][] = [
    [T, 2, 'reason_plan', 'think: "Let me carefully read and understand the issue"'],
    [T, 4, 'inspect_diagnose', 'str_replace_editor view /workspace'],
    [T, 6, 'inspect_diagnose', 'cd REPO && pwd'],
    [T, 12, 'inspect_diagnose', 'python -m pytest --help | head -20: prints help, runs no code under test'],
    [T, 14, 'reproduce_test', 'python -m pytest tests.unit/ -v | head -30, before any edit'],
    [T, 16, 'inspect_diagnose', 'find . -name "*.py" -exec grep -l ... {} \\;'],
    [T, 38, 'edit', 'str_replace_editor create reproduce_issue.py (a create: does not open the verify phase)'],
    [T, 40, 'reproduce_test', 'python reproduce_issue.py, still before the first modifying edit'],
    [T, 46, 'edit', 'str_replace_editor str_replace path_utilities.py: the first modifying edit'],
    [T, 48, 'verify_test', 'python reproduce_issue.py after the fix'],
    [T, 58, 'verify_inspect', 'find tests.unit/ -exec grep -l buildreport, after the fix'],
    [T, 62, 'verify_test', 'python -c "from edk2toollib... import Edk2Path ..."'],
    [T, 72, 'verify_inspect', 'str_replace_editor view path_utilities.py [173, 225] after the fix'],
    [T, 84, 'edit', 'rm reproduce_issue.py comprehensive_test.py debug_test.py test_bug_fix.py'],
    [T, 90, 'finalize', 'finish'],
    [P, 2, 'inspect_diagnose', 'str_replace_editor view /workspace'],
    [P, 16, 'inspect_diagnose', 'python -m pytest --version'],
    [P, 18, 'reproduce_test', 'python -c "import linopy; print(...)": running code'],
    [P, 44, 'inspect_diagnose', 'grep -rn "\\.diff" test/ || echo "No diff tests found"'],
    [P, 52, 'edit', 'str_replace_editor create reproduce_issue.py'],
    [P, 54, 'reproduce_test', 'python reproduce_issue.py'],
    [P, 78, 'reproduce_test', 'python -c "import xarray as xr; help(xr.DataArray.diff)" | head -20'],
    [P, 82, 'edit', 'str_replace_editor str_replace linopy/variables.py: first modifying edit'],
    [P, 100, 'edit', 'str_replace_editor with path/old_str/new_str (command key later in the arguments)'],
    [P, 138, 'verify_inspect', 'python -m pytest test/test_model.py --collect-only | head -10'],
    [P, 152, 'verify_inspect', 'git status'],
    [P, 154, 'verify_inspect', 'git diff linopy/variables.py'],
    [P, 156, 'finalize', 'finish'],
    [N, 14, 'reproduce_test', 'python -m nose numpydoc.tests'],
    [N, 36, 'reason_plan', 'think with empty narration'],
    [N, 40, 'edit', 'str_replace_editor create reproduce_issue.py'],
    [N, 42, 'reproduce_test', 'python reproduce_issue.py'],
    [N, 52, 'edit', 'str_replace_editor str_replace numpydoc/docscrape.py: first modifying edit'],
    [N, 54, 'verify_test', 'python test_function_context.py'],
    [N, 56, 'verify_inspect', 'grep -n "self\\[" numpydoc/docscrape.py'],
    [N, 130, 'finalize', 'finish'],
  ];
  it.each(cases)('%s message %i is %s (%s)', (instance, index, label) => {
    expect(labelAt(instance, index)).toBe(label);
  });

  it('the fixture holds the three rows, with their attribution', () => {
    expect(rows.map((r) => [r.instance_id, r.messages, r.turns.length])).toEqual([
      [T, 91, 45],
      [P, 157, 78],
      [N, 131, 65],
    ]);
    expect(fixture.license).toMatch(/^CC-BY-4\.0, © Nebius/);
  });

  it('labels from the full sample rows (with tool results) are the same', () => {
    const full = JSON.parse(readFileSync(SAMPLE, 'utf8')) as { instance_id: string; trajectory: TurnInput[] }[];
    for (const r of rows) expect(labelTurns(full.find((x) => x.instance_id === r.instance_id)!.trajectory)).toEqual(labelTurns(assistants(r)));
  });

  it('one label per assistant turn; phases in order', () => {
    for (const r of rows) {
      const labels = labelTurns(assistants(r));
      expect(labels).toHaveLength(r.turns.length);
      const firstVerify = labels.findIndex((l) => l.startsWith('verify_'));
      const lastBefore = Math.max(labels.lastIndexOf('inspect_diagnose'), labels.lastIndexOf('reproduce_test'));
      expect(lastBefore).toBeLessThan(firstVerify);
      expect(labels.at(-1)).toBe('finalize');
    }
  });

  it('collapsed sequence of the tianocore row', () => {
    const seq = collapseRuns(labelTurns(assistants(rows.find((r) => r.instance_id === T)!)));
    expect(seq.slice(0, 12)).toEqual([
      'reason_plan',
      'inspect_diagnose',
      'reproduce_test',
      'inspect_diagnose',
      'reason_plan',
      'edit',
      'reproduce_test',
      'reason_plan',
      'inspect_diagnose',
      'edit',
      'verify_test',
      'edit',
    ]);
  });

  it("phaseStart 'any-edit': creating reproduce_issue.py already opens the verify phase", () => {
    const row = rows.find((r) => r.instance_id === T)!;
    const labels = labelTurns(assistants(row), { phaseStart: 'any-edit' });
    expect(labels[row.turns.findIndex((t) => t.index === 40)]).toBe('verify_test');
  });

  it('emitted messages (tool_calls as a JSON string) label the same as the raw rows', () => {
    for (const r of rows) {
      const emitted = assistants(r).map((m) => ({ ...m, tool_calls: Array.isArray(m.tool_calls) ? JSON.stringify(m.tool_calls) : null }));
      expect(labelTurns(emitted)).toEqual(labelTurns(assistants(r)));
    }
  });
});

describe('fixtures/sources: the same labels through either action format (derived from CC-BY-4.0 © Nebius rows)', () => {
  const read = (name: string) =>
    readFileSync(new URL(`../fixtures/sources/${name}`, import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { instance_id: string; resolved: unknown; messages: TurnInput[] });
  const tool = read('open-swe-traces.jsonl').filter((r) => r.resolved === 1);
  const text = read('text-actions.jsonl').filter((r) => r.resolved === true);
  it.each([T, P, N])('%s', (instance) => {
    const a = labelTurns(tool.find((r) => r.instance_id === instance)!.messages);
    const b = labelTurns(text.find((r) => r.instance_id === instance)!.messages, { textActions: true });
    expect(b).toEqual(a);
    expect(new Set(a).size).toBeGreaterThan(1);
  });
});

describe('classifyShell', () => {
  const cases: [command: string, kind: TurnKind][] = [
    ['', 'inspect'],
    ['ls -la', 'inspect'],
    ['cd /repo && grep -rn "foo" src/ | head -20', 'inspect'],
    ["sed -n '10,20p' a.py", 'inspect'],
    ["sed -i 's/a/b/' a.py", 'modify'],
    ["sed -i.bak -e 's/a/b/' a.py", 'modify'],
    ["sed -Ei 's/a/b/' a.py", 'modify'],
    ["perl -pi -e 's/a/b/' a.py", 'modify'],
    ['perl script.pl', 'test'],
    ['awk -i inplace \'{print}\' a.txt', 'modify'],
    ["awk '{print $1}' a.txt", 'inspect'],
    ['patch -p1 < fix.diff', 'modify'],
    ['git apply fix.patch', 'modify'],
    ['git -C /repo checkout -- a.py', 'modify'],
    ['git stash', 'modify'],
    ['git status && git diff', 'inspect'],
    ['git log --oneline | head', 'inspect'],
    ["cat > reproduce.py << 'EOF'\nimport sys\nprint(sys.argv) > 3\nEOF", 'create'],
    ["cat <<'EOF' > /tmp/t.py\nx = 1\nEOF\npython /tmp/t.py", 'create'],
    ['echo "x = 1" >> a.py', 'modify'],
    ['echo hello', 'inspect'],
    ['echo hi > /dev/null', 'inspect'],
    ['printf "a\\n" > notes.txt', 'create'],
    ['python -m pytest tests/ -x 2>&1 | tee test.log', 'test'],
    ['python -m pytest tests/ > /tmp/out.txt 2>&1; tail -5 /tmp/out.txt', 'test'],
    ['echo "data" | tee out.txt', 'create'],
    ['echo "data" | tee -a out.txt', 'modify'],
    ['rm reproduce.py', 'create'],
    ['mkdir -p tests/new && touch tests/new/__init__.py', 'create'],
    ['find . -name "*.pyc" -delete', 'create'],
    ['find . -name "*.py" -exec sed -i "s/a/b/" {} \\;', 'modify'],
    ['find . -name "*.py" -exec grep -l foo {} +', 'inspect'],
    ['python reproduce.py', 'test'],
    ['python3 -c "import x; print(x.__file__)"', 'test'],
    ['python - <<EOF\nprint(1)\nEOF', 'test'],
    ['/opt/conda/envs/testbed/bin/python -m pytest -q', 'test'],
    ['python --version', 'inspect'],
    ['python -m pip install -e .', 'inspect'],
    ['pip install pytest', 'inspect'],
    ['PYTHONPATH=src timeout 60 pytest -x tests/test_a.py', 'test'],
    ['pytest --collect-only -q', 'inspect'],
    ['timeout -s KILL 60 python -m pytest -x', 'test'],
    ['nice -n 10 make check', 'test'],
    ['command -v python', 'inspect'],
    ['env PYTHONPATH=. DEBUG=1 python t.py', 'test'],
    ['tox -e py39', 'test'],
    ['npm test', 'test'],
    ['npm install', 'inspect'],
    ['npx jest src/a.test.js', 'test'],
    ['yarn run build', 'test'],
    ['go test ./...', 'test'],
    ['go mod tidy', 'inspect'],
    ['cargo test --lib', 'test'],
    ['make -j4 test', 'test'],
    ['./run_tests.sh unit', 'test'],
    ['bash scripts/check.sh', 'test'],
    ['bash -c "sed -i s/a/b/ x.py"', 'modify'],
    ['uv run pytest -q', 'test'],
    ['poetry install', 'inspect'],
    ['source activate testbed && conda activate testbed', 'inspect'],
    ['xargs grep -l foo < files.txt', 'inspect'],
    ['ls | xargs rm', 'create'],
    ['# just a comment', 'inspect'],
    ['echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached', 'finalize'],
    ['echo MINI_SWE_AGENT_FINAL_OUTPUT', 'finalize'],
    ['submit', 'finalize'],
    ['open src/a.py 120', 'inspect'],
    ['search_dir "diff" linopy', 'inspect'],
    ['find_file "image.py" plumbum', 'inspect'],
    ['edit 5:5\nimport plumbum.cli as cli\nend_of_edit', 'modify'],
    ['create reproduce.py', 'create'],
    ["str_replace_editor view /testbed/arrow/arrow.py --view_range 1 50", 'inspect'],
    ["str_replace_editor create /testbed/r.py --file_text 'print(1)'", 'create'],
    ["str_replace_editor str_replace /testbed/a.py --old_str 'a' --new_str 'b'", 'modify'],
    ["str_replace_editor undo_edit /testbed/a.py", 'modify'],
  ];
  it.each(cases)('%j -> %s', (command, kind) => {
    expect(classifyShell(command)).toBe(kind);
  });

  it('parseShell: quotes, operators, heredocs and redirections', () => {
    const p = parseShell(`cd "/my repo" && grep -n 'a && b' f.py | head -3; cat > x.py <<'EOF'\nls && rm -rf /\nEOF\necho done 2>&1 >> log.txt`);
    expect(p.map((pl) => pl.map((c) => c.words))).toEqual([
      [['cd', '/my repo']],
      [['grep', '-n', 'a && b', 'f.py'], ['head', '-3']],
      [['cat']],
      [['echo', 'done']],
    ]);
    expect(p[2]![0]!.redirects).toEqual([{ op: '>', target: 'x.py' }]);
    expect(p[3]![0]!.redirects).toEqual([{ op: '>>', target: 'log.txt' }]);
  });
});

describe('turnKind: tool calls', () => {
  const call = (name: string, args: Record<string, unknown>) => ({ id: '1', type: 'function', function: { name, arguments: JSON.stringify(args) } });
  const cases: [name: string, msg: TurnInput, kind: TurnKind][] = [
    ['finish', { role: 'assistant', content: '', tool_calls: [call('finish', { message: 'done' })] }, 'finalize'],
    ['submit', { role: 'assistant', content: '', tool_calls: [call('submit', {})] }, 'finalize'],
    ['task_tracker', { role: 'assistant', content: '', tool_calls: [call('task_tracker', { command: 'plan', task_list: [] })] }, 'reason'],
    ['think + str_replace: the highest kind', { role: 'assistant', content: '', tool_calls: [call('think', { thought: 't' }), call('str_replace_editor', { command: 'str_replace', path: 'a', old_str: 'x', new_str: 'y' })] }, 'modify'],
    ['insert', { role: 'assistant', content: '', tool_calls: [call('str_replace_editor', { command: 'insert', path: 'a', insert_line: 3, new_str: 'y' })] }, 'modify'],
    ['editor without command, file_text', { role: 'assistant', content: '', tool_calls: [call('str_replace_editor', { path: 'a', file_text: 'x' })] }, 'create'],
    ['execute_bash is_input', { role: 'assistant', content: '', tool_calls: [call('execute_bash', { command: 'C-c', is_input: 'true' })] }, 'inspect'],
    ['execute_bash empty command (read more output)', { role: 'assistant', content: '', tool_calls: [call('execute_bash', { command: '' })] }, 'inspect'],
    ['execute_ipython_cell', { role: 'assistant', content: '', tool_calls: [call('execute_ipython_cell', { code: 'print(1)' })] }, 'test'],
    ['SWE-agent bash tool', { role: 'assistant', content: '', tool_calls: [call('bash', { command: 'pytest -q' })] }, 'test'],
    ['unknown tool', { role: 'assistant', content: '', tool_calls: [call('web_read', { url: 'x' })] }, 'inspect'],
    ['malformed arguments string', { role: 'assistant', content: '', tool_calls: [{ id: '1', type: 'function', function: { name: 'execute_bash', arguments: '{"command": "ls' } }] }, 'inspect'],
    ['text only', { role: 'assistant', content: 'I think the fix is done.', tool_calls: null }, 'reason'],
    ['"None" tool_calls', { role: 'assistant', content: 'hm', tool_calls: 'None' }, 'reason'],
    ['a bash block in plain OpenHands text is narration', { role: 'assistant', content: `Run:\n${F}bash\npytest\n${F}`, tool_calls: null }, 'reason'],
  ];
  it.each(cases)('%s', (_n, msg, kind) => expect(turnKind(msg)).toBe(kind));

  it('text actions: the last bash block is the action; none is a reason turn', () => {
    expect(turnKind({ role: 'assistant', content: `THOUGHT: run\n${F}bash\npytest\n${F}` }, { textActions: true })).toBe('test');
    expect(turnKind({ role: 'assistant', content: 'THOUGHT: I should look at the traceback more closely.' }, { textActions: true })).toBe('reason');
    expect(turnKind({ role: 'assistant', content: `DISCUSSION\n${F}\nopen a.py\n${F}` }, { textActions: true, bareFence: true })).toBe('inspect');
  });
});

describe('sequences', () => {
  it('collapseRuns', () => {
    expect(collapseRuns([])).toEqual([]);
    expect(collapseRuns(['a', 'a', 'b', 'a', 'a'])).toEqual(['a', 'b', 'a']);
  });

  it('behaviorSequence uses the prompt as history for the phase', () => {
    const edit = { role: 'assistant', content: '', tool_calls: [{ function: { name: 'str_replace_editor', arguments: '{"command":"str_replace","path":"a","old_str":"x","new_str":"y"}' } }] };
    const test = { role: 'assistant', content: '', tool_calls: [{ function: { name: 'execute_bash', arguments: '{"command":"pytest"}' } }] };
    const result = { role: 'tool', content: 'ok' };
    expect(behaviorSequence([{ role: 'user', content: 'fix' }], test)).toEqual(['reproduce_test']);
    expect(behaviorSequence([{ role: 'user', content: 'fix' }, edit, result], test)).toEqual(['verify_test']);
    expect(behaviorSequence([{ role: 'user', content: 'fix' }], [test, result, test, result, edit, result, test])).toEqual(['reproduce_test', 'edit', 'verify_test']);
  });
});

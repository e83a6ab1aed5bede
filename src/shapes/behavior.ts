// Behaviour groups. Every assistant turn gets one label from its action.
//
// Step 1, the KIND of one assistant turn (a turn with several tool calls takes the highest kind of
// its calls, in the order finalize > modify > create > test > inspect > reason):
//
// | action                                                                  | kind     |
// |-------------------------------------------------------------------------|----------|
// | tool `finish` / `submit`                                                | finalize |
// | tool `think` / `task_tracker`                                           | reason   |
// | assistant text with no tool call (and, for text actions, no action block)| reason |
// | `str_replace_editor` (or `str_replace_based_edit_tool`) `view`          | inspect  |
// |   ... `create`, or arguments with `file_text` and no command             | create   |
// |   ... `str_replace` / `insert` / `undo_edit`, or `old_str` with no command | modify |
// |   ... any other or missing command                                      | inspect  |
// | `execute_ipython_cell` (any code)                                       | test     |
// | `execute_bash` / `bash` / `run_bash` / `shell` / `terminal` / `execute_command`: the shell rules below on `command`; an empty command or `is_input` = inspect | |
// | any other tool (browser, fetch, ...)                                    | inspect  |
// | text actions (`labelTurns(.., {textActions: true})`): the shell rules below on the LAST action block (text-actions.ts) | |
//
// Shell rules. Heredoc bodies are skipped; the command is split into simple commands on newlines,
// `;`, `&&`, `||`, `&`, `|`, `(`, `)` outside quotes; each simple command is classified after
// dropping `VAR=value` words and the wrappers sudo, env, time, nohup, command, exec, stdbuf,
// timeout DURATION, xargs [options], and the runners `uv run`, `poetry run`, `pipenv run`,
// `pdm run`, `hatch run`, `conda run [-n ENV]`, `bundle exec`, `npx`, `pnpm exec`, `yarn exec`.
// The command takes the highest kind of its simple commands (same order as above).
//
// | simple command                                                              | kind     |
// |-----------------------------------------------------------------------------|----------|
// | contains COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT or MINI_SWE_AGENT_FINAL_OUTPUT (mini-swe-agent), or `submit` (SWE-agent) | finalize |
// | `sed -i…`/`--in-place`, `perl -i…`/`-pi…`, `awk -i inplace`, `patch`, `ed`, `ex`, `truncate` | modify |
// | `git apply|am|checkout|restore|reset|revert|stash|cherry-pick|merge|rebase|pull` | modify |
// | `cat` / `echo` / `printf` with `>>` into a file; `tee -a FILE`                 | modify   |
// | `cat` / `echo` / `printf` with `>` into a file; `tee FILE`                     | create   |
// | `rm`, `rmdir`, `mv`, `cp`, `touch`, `mkdir`, `ln`, `chmod`, `chown`, `install`, `unzip`, `tar` | create |
// | SWE-agent `edit` / `create`; `str_replace_editor CMD` in a shell block       | modify / create / editor rule |
// | `find … -delete`; `find … -exec CMD` / `-execdir CMD`                        | create; CMD's kind |
// | python*, `py`, `ipython` (a script, `-c`, stdin/heredoc, `-m MODULE`) except `--version`/`-V` and `-m pip|venv|ensurepip|site|pydoc|json.tool` | test |
// | pytest, py.test, tox, nox, nosetests, nose2, coverage, unittest               | test     |
// | node/deno/bun (not `--version`), jest, vitest, mocha, tsc                     | test     |
// | npm/yarn/pnpm `test|t|run|run-script|start|exec`; go `test|run|build|vet|generate`; cargo `test|run|build|check|bench|clippy|nextest` | test |
// | make, cmake, ctest, ninja, meson, mvn, mvnw, gradle, gradlew, ant, sbt, javac, java, gcc, g++, cc, clang, clang++, rustc, ruby, rspec, rake, php, phpunit, perl (no -i), dotnet, swift | test |
// | a test command above with `--help`, `-h`, `--version`, `--collect-only` or `--co` | inspect |
// | `bash|sh|zsh FILE` (a script) -> test; `bash|sh|zsh -c "CMD"` -> CMD's kind   |          |
// | any other program run by path (`./run_tests.sh`, `/opt/x/bin/tool`)          | test     |
// | anything else (grep, rg, find, ls, cat, head, tail, sed -n, awk, wc, git status/diff/log/show, cd, pwd, echo, pip install, ...) and SWE-agent `open`, `goto`, `scroll_up`, `scroll_down`, `search_file`, `search_dir`, `find_file` | inspect |
//
// Output redirections of other commands (`pytest > log.txt 2>&1`) do not make an edit, and `tee` in
// a pipeline that runs a test command only captures output. Redirection to /dev/* or a descriptor is
// never an edit.
//
// Step 2, the LABEL, walking the assistant turns in order:
//   finalize -> finalize; reason -> reason_plan; modify and create -> edit;
//   inspect  -> inspect_diagnose before the first edit, verify_inspect after it;
//   test     -> reproduce_test  before the first edit, verify_test    after it.
// "The first edit" (it opens the verify phase from the NEXT turn on) is by default the first MODIFY
// turn: an edit of existing content. Creating files (`create`, `cat > f`, `touch`) does not open it,
// because agents create their reproduction scripts before the fix (all three Nebius sample rows
// create reproduce_issue.py first). `{ phaseStart: 'any-edit' }` makes every edit open it.
import { lastActionBlock, xmlFunctionCalls, type TextActionOptions } from '../sources/text-actions.js';

export type BehaviorLabel =
  | 'inspect_diagnose'
  | 'reproduce_test'
  | 'edit'
  | 'verify_inspect'
  | 'verify_test'
  | 'finalize'
  | 'reason_plan';

export const BEHAVIOR_LABELS: readonly BehaviorLabel[] = [
  'inspect_diagnose',
  'reproduce_test',
  'edit',
  'verify_inspect',
  'verify_test',
  'finalize',
  'reason_plan',
];

export type TurnKind = 'finalize' | 'modify' | 'create' | 'test' | 'inspect' | 'reason';

const RANK: Record<TurnKind, number> = { reason: 0, inspect: 1, test: 2, create: 3, modify: 4, finalize: 5 };

function max(a: TurnKind, b: TurnKind): TurnKind {
  return RANK[b] > RANK[a] ? b : a;
}

export interface LabelOptions extends TextActionOptions {
  /** Classify the last action block of text-only assistant messages (the text-actions source). */
  textActions?: boolean;
  /** What opens the verify phase: the first modify turn (default) or any edit turn. */
  phaseStart?: 'modify' | 'any-edit';
}

/** What labelling needs of a message: normalised (tool_calls a list) or emitted (a JSON string). */
export interface TurnInput {
  role: string;
  content: string | null;
  tool_calls?: unknown;
}

// ---------------------------------------------------------------------------------------------
// Shell commands
// ---------------------------------------------------------------------------------------------

interface Redirect {
  op: '>' | '>>';
  target: string;
}
interface SimpleCommand {
  words: string[];
  redirects: Redirect[];
}
/** Simple commands joined by `|`. */
type Pipeline = SimpleCommand[];

const HEREDOC = /<<(-?)[ \t]*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\2/g;

/** Drop heredoc bodies (the lines after a `<<DELIM` line up to the DELIM line). */
export function stripHeredocs(cmd: string): string {
  const lines = cmd.replace(/\r\n/g, '\n').split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    out.push(line);
    const pending: { dash: boolean; delim: string }[] = [];
    HEREDOC.lastIndex = 0;
    for (let m = HEREDOC.exec(line); m; m = HEREDOC.exec(line)) {
      if (line[m.index + 2] === '<') continue; // here-string <<<
      pending.push({ dash: m[1] === '-', delim: m[3]! });
    }
    for (const h of pending) {
      for (i++; i < lines.length; i++) {
        const l = h.dash ? lines[i]!.replace(/^\t+/, '') : lines[i]!;
        if (l.trim() === h.delim) break;
      }
    }
  }
  return out.join('\n');
}

/** Split a shell command into pipelines of simple commands (quote-aware; an approximation of sh). */
export function parseShell(cmd: string): Pipeline[] {
  const text = stripHeredocs(cmd);
  const pipelines: Pipeline[] = [];
  let pipeline: Pipeline = [];
  let words: string[] = [];
  let redirects: Redirect[] = [];
  let word = '';
  let inWord = false;
  let pendingRedirect: Redirect['op'] | 'fd' | null = null;

  const endWord = () => {
    if (!inWord) return;
    if (pendingRedirect === 'fd') pendingRedirect = null;
    else if (pendingRedirect) {
      redirects.push({ op: pendingRedirect, target: word });
      pendingRedirect = null;
    } else words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    pendingRedirect = null;
    if (words.length > 0 || redirects.length > 0) pipeline.push({ words, redirects });
    words = [];
    redirects = [];
  };
  const endPipeline = () => {
    endCommand();
    if (pipeline.length > 0) pipelines.push(pipeline);
    pipeline = [];
  };

  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') {
      if (text[i + 1] === '\n') {
        i++;
        continue; // line continuation
      }
      word += text[i + 1] ?? '';
      inWord = true;
      i++;
      continue;
    }
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      const stop = end < 0 ? text.length : end;
      word += text.slice(i + 1, stop);
      inWord = true;
      i = stop;
      continue;
    }
    if (c === '"' || c === '`') {
      let j = i + 1;
      for (; j < text.length && text[j] !== c; j++) {
        if (text[j] === '\\' && j + 1 < text.length) {
          word += text[j + 1];
          j++;
        } else word += text[j];
      }
      inWord = true;
      i = j;
      continue;
    }
    if (c === '$' && text[i + 1] === '(') {
      // $( ... ) stays inside the word, nesting counted.
      let depth = 0;
      let j = i + 1;
      for (; j < text.length; j++) {
        if (text[j] === '(') depth++;
        else if (text[j] === ')' && --depth === 0) break;
      }
      word += text.slice(i, j + 1);
      inWord = true;
      i = j;
      continue;
    }
    if (c === '#' && !inWord) {
      const nl = text.indexOf('\n', i);
      i = (nl < 0 ? text.length : nl) - 1;
      continue;
    }
    if (c === ' ' || c === '\t') {
      endWord();
      continue;
    }
    const brace = !inWord && ((c === '{' && /\s/.test(text[i + 1] ?? ' ')) || c === '}');
    if (c === '\n' || c === ';' || c === '(' || c === ')' || brace) {
      endPipeline();
      continue;
    }
    if (c === '&') {
      if (text[i + 1] === '&') {
        i++;
        endPipeline();
      } else if (text[i + 1] === '>') {
        endWord();
        i++;
        pendingRedirect = '>';
        if (text[i + 1] === '>') {
          pendingRedirect = '>>';
          i++;
        }
      } else endPipeline(); // background
      continue;
    }
    if (c === '|') {
      if (text[i + 1] === '|') {
        i++;
        endPipeline();
      } else {
        if (text[i + 1] === '&') i++;
        endCommand();
      }
      continue;
    }
    if (c === '>' || c === '<') {
      // An fd number glued before the operator (`2>`) belongs to it.
      if (inWord && /^\d+$/.test(word)) {
        word = '';
        inWord = false;
      } else endWord();
      if (c === '<') {
        while (text[i + 1] === '<') i++;
        pendingRedirect = 'fd'; // the input file (or heredoc word) is not an argument
        continue;
      }
      let op: Redirect['op'] = '>';
      if (text[i + 1] === '>') {
        op = '>>';
        i++;
      } else if (text[i + 1] === '|') i++;
      if (text[i + 1] === '&') {
        i++;
        pendingRedirect = 'fd'; // >&2: a descriptor
        continue;
      }
      pendingRedirect = op;
      continue;
    }
    word += c;
    inWord = true;
  }
  endPipeline();
  return pipelines;
}

const WRAPPERS = new Set(['sudo', 'env', 'time', 'nohup', 'command', 'exec', 'stdbuf', 'nice']);
const RUNNERS: Record<string, string[]> = {
  uv: ['run'],
  poetry: ['run'],
  pipenv: ['run'],
  pdm: ['run'],
  hatch: ['run'],
  conda: ['run'],
  bundle: ['exec'],
  pnpm: ['exec', 'dlx'],
  yarn: ['exec', 'dlx'],
};
const INSPECT_MODULES = new Set(['pip', 'venv', 'ensurepip', 'site', 'pydoc', 'json.tool']);
const TEST_PROGRAMS = new Set([
  'pytest', 'py.test', 'tox', 'nox', 'nosetests', 'nose2', 'coverage', 'unittest',
  'jest', 'vitest', 'mocha', 'tsc',
  'make', 'cmake', 'ctest', 'ninja', 'meson', 'mvn', 'mvnw', 'gradle', 'gradlew', 'ant', 'sbt',
  'javac', 'java', 'gcc', 'g++', 'cc', 'clang', 'clang++', 'rustc', 'ruby', 'rspec', 'rake',
  'php', 'phpunit', 'dotnet', 'swift',
]);
const FILE_OPS = new Set(['rm', 'rmdir', 'mv', 'cp', 'touch', 'mkdir', 'ln', 'chmod', 'chown', 'install', 'unzip', 'tar']);
const MODIFY_PROGRAMS = new Set(['patch', 'ed', 'ex', 'truncate']);
const GIT_MODIFY = new Set(['apply', 'am', 'checkout', 'restore', 'reset', 'revert', 'stash', 'cherry-pick', 'merge', 'rebase', 'pull']);
const SWE_AGENT_INSPECT = new Set(['open', 'goto', 'scroll_up', 'scroll_down', 'search_file', 'search_dir', 'find_file', 'filemap']);
const FINAL_MARKERS = ['COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT', 'MINI_SWE_AGENT_FINAL_OUTPUT'];
const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash']);
const WRITERS = new Set(['cat', 'echo', 'printf']);

function basename(w: string): string {
  const k = w.lastIndexOf('/');
  return k < 0 ? w : w.slice(k + 1);
}

function isRealFile(target: string): boolean {
  return target !== '' && !target.startsWith('/dev/') && !/^&?\d*$/.test(target);
}

/** Remove VAR=value words, wrappers and runners; returns the words of the program actually run. */
function unwrap(words: string[]): string[] {
  let w = words;
  for (let guard = 0; guard < 20 && w.length > 0; guard++) {
    const head = w[0]!;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(head)) {
      w = w.slice(1);
      continue;
    }
    const name = basename(head);
    if (name === 'command' && (w[1] === '-v' || w[1] === '-V')) return ['which']; // a lookup, not a run
    if (WRAPPERS.has(name)) {
      w = w.slice(1);
      while (w.length > 0 && (w[0]!.startsWith('-') || (name === 'env' && w[0]!.includes('=')))) {
        w = w.slice(name === 'nice' && w[0] === '-n' ? 2 : 1);
      }
      continue;
    }
    if (name === 'timeout') {
      w = w.slice(1);
      while (w.length > 0 && w[0]!.startsWith('-')) w = w.slice(/^(-s|--signal|-k|--kill-after)$/.test(w[0]!) ? 2 : 1);
      w = w.slice(1); // the duration
      continue;
    }
    if (name === 'xargs') {
      w = w.slice(1);
      while (w.length > 0 && w[0]!.startsWith('-')) w = w.slice(/^-[IiLnPdEs]$/.test(w[0]!) ? 2 : 1);
      continue;
    }
    if (name === 'npx') {
      w = w.slice(1);
      while (w.length > 0 && w[0]!.startsWith('-')) w = w.slice(1);
      if (w.length === 0) return ['npx'];
      continue;
    }
    const runner = RUNNERS[name];
    if (runner && w[1] !== undefined && runner.includes(w[1])) {
      w = w.slice(2);
      while (w.length > 0 && w[0]!.startsWith('-')) w = w.slice(/^(-n|--name|-p|--prefix)$/.test(w[0]!) ? 2 : 1);
      if (w.length === 0) return ['python']; // a bare runner runs code
      continue;
    }
    break;
  }
  return w;
}

function firstArg(args: string[]): string | undefined {
  return args.find((a) => !a.startsWith('-'));
}

/** The editor tool's command -> kind (shared by the tool call and the shell form). */
function editorKind(command: unknown, args: Record<string, unknown>): TurnKind {
  switch (command) {
    case 'view':
      return 'inspect';
    case 'create':
      return 'create';
    case 'str_replace':
    case 'insert':
    case 'undo_edit':
      return 'modify';
    case undefined:
    case null:
      if (typeof args.old_str === 'string' || typeof args.new_str === 'string') return 'modify';
      if (typeof args.file_text === 'string') return 'create';
      return 'inspect';
    default:
      return 'inspect';
  }
}

function programKind(cmd: SimpleCommand): TurnKind {
  const raw = cmd.words;
  if (raw.some((w) => FINAL_MARKERS.some((m) => w.includes(m)))) return 'finalize';
  const w = unwrap(raw);
  const head = w[0];
  if (head === undefined) return 'inspect';
  const name = basename(head);
  const args = w.slice(1);
  const writes = cmd.redirects.filter((r) => isRealFile(r.target));

  if (WRITERS.has(name) && writes.length > 0) return writes.some((r) => r.op === '>>') ? 'modify' : 'create';
  if (name === 'submit' && args.length === 0) return 'finalize';
  if (name === 'sed') return args.some((a) => a === '--in-place' || a.startsWith('--in-place=') || /^-[a-zA-Z]*i/.test(a)) ? 'modify' : 'inspect';
  if (name === 'perl') return args.some((a) => /^-[a-zA-Z]*i/.test(a)) ? 'modify' : 'test';
  if (name === 'awk' || name === 'gawk') return args.some((a, k) => a === '-i' && args[k + 1] === 'inplace') ? 'modify' : 'inspect';
  if (MODIFY_PROGRAMS.has(name)) return 'modify';
  if (name === 'git') {
    const sub = firstArg(args.filter((a, k) => !(k > 0 && /^-[Cc]$/.test(args[k - 1]!))));
    return sub !== undefined && GIT_MODIFY.has(sub) ? 'modify' : 'inspect';
  }
  if (name === 'tee') {
    const files = args.filter((a) => !a.startsWith('-') && isRealFile(a));
    if (files.length === 0) return 'inspect';
    return args.some((a) => a === '-a' || a === '--append') ? 'modify' : 'create';
  }
  if (FILE_OPS.has(name)) return 'create';
  if (name === 'edit') return 'modify';
  if (name === 'create') return 'create';
  if (name === 'str_replace_editor' || name === 'str_replace_based_edit_tool') {
    const opts: Record<string, unknown> = {};
    args.forEach((a, k) => {
      if (a.startsWith('--')) opts[a.slice(2)] = args[k + 1] ?? '';
    });
    return editorKind(args[0], opts);
  }
  if (SWE_AGENT_INSPECT.has(name)) return 'inspect';
  if (name === 'find') {
    if (args.includes('-delete')) return 'create';
    const k = args.findIndex((a) => a === '-exec' || a === '-execdir' || a === '-ok');
    if (k >= 0) {
      const end = args.findIndex((a, j) => j > k && (a === ';' || a === '+' || a === '\\;'));
      return simpleKind({ words: args.slice(k + 1, end < 0 ? undefined : end), redirects: [] });
    }
    return 'inspect';
  }
  if (/^python[0-9.]*$/.test(name) || name === 'py' || name === 'ipython' || name === 'pypy' || name === 'pypy3') {
    const opts = args.filter((a) => a.startsWith('-'));
    if (args.length > 0 && args.every((a) => a === '--version' || a === '-V' || a === '-VV')) return 'inspect';
    const m = args.indexOf('-m');
    if (m >= 0 && opts.length > 0) return INSPECT_MODULES.has(args[m + 1] ?? '') ? 'inspect' : 'test';
    return 'test';
  }
  if (name === 'node' || name === 'deno' || name === 'bun') {
    return args.length > 0 && args.every((a) => a === '--version' || a === '-v') ? 'inspect' : 'test';
  }
  if (name === 'npm' || name === 'yarn' || name === 'pnpm') {
    const sub = firstArg(args);
    return sub !== undefined && ['test', 't', 'run', 'run-script', 'start', 'exec', 'tst'].includes(sub) ? 'test' : 'inspect';
  }
  if (name === 'go') return ['test', 'run', 'build', 'vet', 'generate'].includes(firstArg(args) ?? '') ? 'test' : 'inspect';
  if (name === 'cargo') return ['test', 'run', 'build', 'check', 'bench', 'clippy', 'nextest'].includes(firstArg(args) ?? '') ? 'test' : 'inspect';
  if (TEST_PROGRAMS.has(name)) return 'test';
  if (SHELLS.has(name)) {
    const c = args.indexOf('-c');
    if (c >= 0 && args[c + 1] !== undefined) return classifyShell(args[c + 1]!);
    return firstArg(args) !== undefined ? 'test' : 'inspect';
  }
  if (head.includes('/')) return 'test'; // a program or script run by path
  return 'inspect';
}

/** Flags that make a test program print something instead of running code. */
const NO_RUN_FLAGS = new Set(['--help', '-h', '--version', '--collect-only', '--co']);

function simpleKind(cmd: SimpleCommand): TurnKind {
  const kind = programKind(cmd);
  if (kind === 'test' && unwrap(cmd.words).some((a) => NO_RUN_FLAGS.has(a))) return 'inspect';
  return kind;
}

/** The kind of a shell command (see the module header). */
export function classifyShell(command: string): TurnKind {
  if (command.trim() === '') return 'inspect';
  let kind: TurnKind | null = null;
  for (const pipeline of parseShell(command)) {
    const kinds = pipeline.map(simpleKind);
    const runsTests = kinds.includes('test');
    pipeline.forEach((cmd, k) => {
      let kk = kinds[k]!;
      // `cmd | tee log` only captures the output of a test run.
      if (runsTests && basename(unwrap(cmd.words)[0] ?? '') === 'tee') kk = 'inspect';
      kind = kind === null ? kk : max(kind, kk);
    });
  }
  return kind ?? 'inspect';
}

// ---------------------------------------------------------------------------------------------
// Turns
// ---------------------------------------------------------------------------------------------

const FINALIZE_TOOLS = new Set(['finish', 'submit']);
const REASON_TOOLS = new Set(['think', 'task_tracker']);
const EDITOR_TOOLS = new Set(['str_replace_editor', 'str_replace_based_edit_tool']);
const SHELL_TOOLS = new Set(['execute_bash', 'bash', 'run_bash', 'shell', 'terminal', 'execute_command']);
const PYTHON_TOOLS = new Set(['execute_ipython_cell', 'ipython', 'python']);

interface CallLike {
  name: string;
  args: Record<string, unknown>;
}

function callsOf(v: unknown): CallLike[] {
  let list = v;
  if (typeof list === 'string') {
    if (list === 'None' || list === '') return [];
    try {
      list = JSON.parse(list);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(list)) return [];
  return list.map((c: unknown) => {
    const f = ((c as { function?: unknown } | null)?.function ?? {}) as { name?: unknown; arguments?: unknown };
    let a = f.arguments;
    if (typeof a === 'string') {
      try {
        a = JSON.parse(a);
      } catch {
        a = {};
      }
    }
    return { name: typeof f.name === 'string' ? f.name : '', args: a !== null && typeof a === 'object' ? (a as Record<string, unknown>) : {} };
  });
}

function callKind(call: CallLike): TurnKind {
  const { name, args } = call;
  if (FINALIZE_TOOLS.has(name)) return 'finalize';
  if (REASON_TOOLS.has(name)) return 'reason';
  if (EDITOR_TOOLS.has(name)) return editorKind(args.command, args);
  if (SHELL_TOOLS.has(name)) {
    if (args.is_input === true || args.is_input === 'true') return 'inspect';
    return typeof args.command === 'string' ? classifyShell(args.command) : 'inspect';
  }
  if (PYTHON_TOOLS.has(name)) return 'test';
  return 'inspect';
}

/** The kind of one assistant message (see the module header). */
export function turnKind(msg: TurnInput, opts: LabelOptions = {}): TurnKind {
  const calls = callsOf(msg.tool_calls);
  if (calls.length > 0) return calls.map(callKind).reduce(max);
  if (opts.textActions) {
    // XML function calls (SWE-smith xml, docs/mining-contract.md §10.3) are labelled as tool calls.
    const xml = opts.xml ? xmlFunctionCalls(msg.content) : [];
    if (xml.length > 0) return xml.map((c) => callKind({ name: c.name, args: { ...c.params } })).reduce(max);
    const block = lastActionBlock(msg.content, opts);
    if (block) return classifyShell(block.body);
  }
  return 'reason';
}

/** One label per assistant message of `messages`, in order. */
export function labelTurns(messages: readonly TurnInput[], opts: LabelOptions = {}): BehaviorLabel[] {
  const out: BehaviorLabel[] = [];
  let verify = false;
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    const kind = turnKind(m, opts);
    switch (kind) {
      case 'finalize':
        out.push('finalize');
        break;
      case 'reason':
        out.push('reason_plan');
        break;
      case 'modify':
      case 'create':
        out.push('edit');
        break;
      case 'inspect':
        out.push(verify ? 'verify_inspect' : 'inspect_diagnose');
        break;
      case 'test':
        out.push(verify ? 'verify_test' : 'reproduce_test');
        break;
    }
    if (kind === 'modify' || (kind === 'create' && opts.phaseStart === 'any-edit')) verify = true;
  }
  return out;
}

/** Collapse contiguous runs: [a, a, b, a] -> [a, b, a]. */
export function collapseRuns<T>(labels: readonly T[]): T[] {
  const out: T[] = [];
  for (const l of labels) if (out.length === 0 || out[out.length - 1] !== l) out.push(l);
  return out;
}

/**
 * The collapsed behaviour sequence of one side of a row: the labels of the assistant turns in
 * `side`, computed with `prompt` as history (so the verify phase is known), runs collapsed.
 */
export function behaviorSequence(
  prompt: readonly TurnInput[],
  side: TurnInput | readonly TurnInput[],
  opts: LabelOptions = {},
): BehaviorLabel[] {
  const sideList: readonly TurnInput[] = Array.isArray(side) ? side : [side as TurnInput];
  const before = prompt.filter((m) => m.role === 'assistant').length;
  return collapseRuns(labelTurns([...prompt, ...sideList], opts).slice(before));
}

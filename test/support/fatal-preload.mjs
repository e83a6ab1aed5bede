// A real native death of the CLI process, on request, for test/fatal-exit.test.ts. Loaded with
// NODE_OPTIONS=--import=<this file>, so it runs in the supervisor, the CLI process and every worker
// thread (Node preloads --import modules in workers too); it acts only where DM_FATAL says:
//
//   DM_FATAL=worker-abort   a decode worker stops the process with V8's %AbortJS (SIGTRAP, exit 133)
//   DM_FATAL=worker-size    a decode worker grows an array past V8's limit: the real
//                           "Fatal JavaScript invalid size error" (SIGTRAP; ~7 s and ~2.5 GB)
//   DM_FATAL=main-abort     the CLI's main thread aborts as it hands out the first decode task
//   DM_FATAL=mkdir-abort    the CLI's main thread aborts the moment it has made a folder whose path
//                           matches DM_FATAL_MKDIR (a regular expression): the narrowest window, made
//                           and nothing done with it yet (the spill folder, an output's folders)
//
// The moment is the first `decode` task: the temporary output, the spill folder and any --split
// folder exist by then. What existed is written to DM_FATAL_SEEN (JSON), so the test knows there
// was something to clean up.
import fs, { readdirSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';

const mode = process.env.DM_FATAL ?? '';
// Only the supervised CLI process and its threads: the supervisor's environment lacks the marker.
const inCli = process.env.DIVERGENCE_MINE_SUPERVISED === '1' || !isMainThread;

function recordWhatExists() {
  const seen = {};
  for (const dir of (process.env.DM_FATAL_WATCH ?? '').split('\n').filter(Boolean)) seen[dir] = readdirSync(dir).sort();
  if (process.env.DM_FATAL_SEEN) writeFileSync(process.env.DM_FATAL_SEEN, JSON.stringify(seen));
}

function abortNow() {
  recordWhatExists();
  setFlagsFromString('--allow-natives-syntax');
  new Function('%AbortJS("forced by test/support/fatal-preload.mjs")')();
}

function growPastTheLimit() {
  recordWhatExists();
  const a = [];
  for (let i = 0; i < 200e6; i++) a.push('');
  return a.length;
}

const isDecode = (m) => m !== null && typeof m === 'object' && m.task?.kind === 'decode';

if (inCli && !isMainThread && parentPort && (mode === 'worker-abort' || mode === 'worker-size')) {
  // The worker's own 'message' listener (serve.ts) is wrapped as it is added: a listener of ours
  // would start the port and take the first message before the worker listens.
  const on = parentPort.on;
  parentPort.on = function (event, listener) {
    if (event !== 'message') return on.call(this, event, listener);
    return on.call(this, event, (m) => {
      if (isDecode(m)) mode === 'worker-abort' ? abortNow() : growPastTheLimit();
      return listener(m);
    });
  };
}

if (inCli && isMainThread && mode === 'main-abort') {
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (m, ...rest) {
    if (isDecode(m)) abortNow();
    return post.call(this, m, ...rest);
  };
}

if (inCli && isMainThread && mode === 'mkdir-abort') {
  // Both ways a folder is made (mkdir, mkdtemp), so the case holds whichever the CLI uses.
  const wanted = new RegExp(process.env.DM_FATAL_MKDIR ?? '^$');
  const { mkdirSync, mkdtempSync } = fs;
  fs.mkdirSync = function (p, ...rest) {
    const r = mkdirSync.call(this, p, ...rest);
    if (typeof p === 'string' && wanted.test(p)) abortNow();
    return r;
  };
  fs.mkdtempSync = function (...args) {
    const made = mkdtempSync.apply(this, args);
    if (wanted.test(made)) abortNow();
    return made;
  };
  syncBuiltinESMExports();
}

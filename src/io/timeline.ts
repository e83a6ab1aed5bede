// The run's fixed-cost timeline, for measuring where the time before and after the work goes
// (bench/README "Fixed cost"): with DIVERGENCE_MINE_TIMELINE=1, each mark is one line on stderr,
// `timeline <ms since the first process started> <thread> <name>`, written at once and synchronously
// (a worker's line must not wait for the main thread's event loop). Off (the default), a mark costs
// one check of a constant.
import { writeSync } from 'node:fs';
import { isMainThread, threadId } from 'node:worker_threads';
import { STDERR_FD_ENV, TIMELINE_ENV, TIMELINE_ORIGIN_ENV } from './supervision.js';

const ON = process.env[TIMELINE_ENV] === '1';

function origin(): number {
  const given = Number(process.env[TIMELINE_ORIGIN_ENV]);
  if (Number.isFinite(given) && given > 0) return given;
  const mine = performance.timeOrigin;
  process.env[TIMELINE_ORIGIN_ENV] = String(mine); // children and workers inherit it
  return mine;
}

const T0 = ON ? origin() : 0;
/** The supervised CLI's real stderr is fd 3 (fd 2 is the supervisor's pipe for native text). */
const fd = (): number => Number(process.env[STDERR_FD_ENV] ?? 2) || 2;

/** Whether marks are written (DIVERGENCE_MINE_TIMELINE=1). */
export function timingOn(): boolean {
  return ON;
}

/** Record that `name` happened now (nothing unless DIVERGENCE_MINE_TIMELINE=1). */
export function mark(name: string): void {
  if (!ON) return;
  const ms = performance.timeOrigin + performance.now() - T0;
  const who = isMainThread ? `pid${process.pid}` : `worker${threadId}`;
  try {
    writeSync(fd(), `timeline ${ms.toFixed(1)} ${who} ${name}\n`);
  } catch {
    // stderr closed: the timeline is a measurement aid, never a reason to fail
  }
}

// Preloaded into a CLI run by tests (`node --require this-file`): when the process exits, its peak
// resident set size (getrusage: every thread, workers included, in KiB) is written to the file named
// by DM_MAX_RSS_FILE. Measured by the kernel, not sampled, so a short spike counts too. `mine` runs
// as two processes (src/supervisor.ts passes node options on to the CLI process): both write, the
// larger figure stays, so the small supervisor exiting last never hides the CLI's peak.
const { isMainThread } = require('node:worker_threads');
if (isMainThread && process.env.DM_MAX_RSS_FILE) {
  const file = process.env.DM_MAX_RSS_FILE;
  process.on('exit', () => {
    const fs = require('node:fs');
    let before = 0;
    try {
      before = Number(fs.readFileSync(file, 'utf8')) || 0;
    } catch {
      // first to write
    }
    fs.writeFileSync(file, String(Math.max(before, process.resourceUsage().maxRSS)));
  });
}

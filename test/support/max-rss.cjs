// Preloaded into a CLI run by tests (`node --require this-file`): when the process exits, its peak
// resident set size (getrusage: every thread, workers included, in KiB) is written to the file named
// by DM_MAX_RSS_FILE. Measured by the kernel, not sampled, so a short spike counts too.
const { isMainThread } = require('node:worker_threads');
if (isMainThread && process.env.DM_MAX_RSS_FILE) {
  const file = process.env.DM_MAX_RSS_FILE;
  process.on('exit', () => require('node:fs').writeFileSync(file, String(process.resourceUsage().maxRSS)));
}

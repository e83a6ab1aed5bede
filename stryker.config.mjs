// Mutation testing of the contract core: sections 2-7 (normalise, sign, sample, select, walk, emit,
// counters) and the encode / spill / spill-walk code whose key hashes decide equal keys and exact
// duplicates. Not in CI: `npm run mutate`. One test process, as the machine's cores are shared.
// Tests: vitest.mutate.config.ts (in-process tests only; a spawned CLI never sees a mutant).
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  "testRunner": "vitest",
  "vitest": {
    "configFile": "vitest.mutate.config.ts",
    "related": false
  },
  "plugins": [
    "@stryker-mutator/vitest-runner"
  ],
  "mutate": [
    "src/contract/normalise.ts",
    "src/contract/sign.ts",
    "src/contract/sample.ts",
    "src/contract/select.ts",
    "src/contract/walk.ts",
    "src/contract/emit.ts",
    "src/contract/counters.ts",
    "src/engine/encode.ts",
    "src/engine/spill.ts",
    "src/engine/spill-walk.ts"
  ],
  "coverageAnalysis": "perTest",
  "concurrency": 1,
  "timeoutMS": 20000,
  "reporters": [
    "clear-text",
    "progress",
    "json",
    "html"
  ],
  "jsonReporter": {
    "fileName": "reports/mutation/mutation.json"
  },
  "htmlReporter": {
    "fileName": "reports/mutation/mutation.html"
  },
  "clearTextReporter": {
    "allowColor": false,
    "logTests": false,
    "reportScoreTable": true
  },
  "thresholds": {
    "high": 90,
    "low": 80,
    "break": null
  },
  "tempDirName": ".stryker-tmp",
  "cleanTempDir": true
};

// The tests StrykerJS (stryker.config.json, `npm run mutate`) runs against each mutant: the
// in-process tests of the contract core. Tests that run the built CLI (bin/, dist/) or the worker
// pool cannot see a mutant (Stryker switches mutants inside this process only), so they are left out.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/unit-normalise.test.ts',
      'test/unit-sign.test.ts',
      'test/unit-select.test.ts',
      'test/unit-walk.test.ts',
      'test/unit-emit.test.ts',
      'test/unit-counters.test.ts',
      'test/unit-spill.test.ts',
      'test/unit-memory.test.ts',
      'test/unit-contract-*.test.ts',
    ],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});

// `npm test` (vitest run): the timeouts of tests and hooks are hang guards, never speed checks
// (bench/ measures speed). Vitest's defaults (5 s per test, 10 s per hook) fail tests that only ran
// slowly beside other work on a loaded machine (two workers, other runs on the same cores); tests
// that need longer still say so themselves.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 300_000,
    globalSetup: ['test/support/global-setup.ts'],
  },
});

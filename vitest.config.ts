import { defineConfig } from 'vitest/config';

// Most end-to-end suites spawn the CLI and wait on it, so two test files at a time keep both cores
// busy (vitest's default on a 2-core machine is one).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 300_000,
  },
});

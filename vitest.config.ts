import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Peers a test started are stopped after it (setup file), and the run fails
    // when a process it started is still running at its end (global setup's teardown).
    setupFiles: ['test/support/peer-cleanup.ts'],
    globalSetup: ['test/support/leftover-peers.ts'],
  },
});

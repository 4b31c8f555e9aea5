import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Tests that bound how long the gateway's main thread may go without turning its event loop
 * (the reassembly sweep's 50 ms). They measure the gateway's own main-thread CPU, but on this
 * 2-core machine the rest of the suite running beside them (other gateways, PostgreSQL servers,
 * browsers) still stretches that work, so they run on their own after it: `npm test` runs both.
 */
const LOOP_TURN_TESTS = ['test/inbound/inbound-limits.test.ts'];
const loopTurnRun = process.env['SMSGATE_LOOP_TURN_TESTS'] === '1';

export default defineConfig({
  test: {
    include: loopTurnRun ? LOOP_TURN_TESTS : ['test/**/*.test.ts'],
    exclude: loopTurnRun ? configDefaults.exclude : [...configDefaults.exclude, ...LOOP_TURN_TESTS],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Peers a test started are stopped after it (setup file), and the run fails
    // when a process it started is still running at its end (global setup's teardown).
    setupFiles: ['test/support/peer-cleanup.ts'],
    globalSetup: ['test/support/leftover-peers.ts'],
  },
});

/**
 * vitest setup file, run in every test file: the peers a test started
 * (spawnPeer) are stopped after it, and those a file's beforeAll started after the file, also
 * when the test failed or timed out. Registered first, so these hooks run after the file's own.
 */
import { afterAll, afterEach, beforeEach } from 'vitest';
import { beginTestPeers, endTestPeers, livePeers, stopPeers } from './peer-process.js';

beforeEach(() => {
  beginTestPeers();
});

afterEach(async () => {
  await endTestPeers();
});

afterAll(async () => {
  await stopPeers(livePeers());
});

/**
 * A pseudo-terminal pair made by socat: one end for the emulated modem, the other for the client
 * (smsgate, gammu), so the client opens a device path exactly as it would a USB modem. Killing
 * socat removes both links, which is how a USB unplug looks to the client (EIO, then close).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { killPeer, spawnPeer } from '../peer-process.js';

export interface PtyPair {
  modemPath: string;
  hostPath: string;
  /** Kills socat (an unplug); resolves once it has exited. */
  close(): Promise<void>;
  readonly closed: boolean;
}

const LINK_WAIT_MS = 5_000;
/** Longest a pty pair lives: no test holds one this long; a socat left by a dead run goes by itself. */
const SOCAT_MAX_RUNTIME_S = 600;

export async function createPtyPair(modemPath: string, hostPath: string): Promise<PtyPair> {
  const child: ChildProcess = spawnPeer('socat', [`pty,raw,echo=0,link=${modemPath}`, `pty,raw,echo=0,link=${hostPath}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
    maxRuntimeS: SOCAT_MAX_RUNTIME_S,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', () => {
      exited = true;
      resolve();
    });
  });
  const deadline = Date.now() + LINK_WAIT_MS;
  while (!(existsSync(modemPath) && existsSync(hostPath))) {
    if (exited || Date.now() > deadline) {
      killPeer(child, 'SIGKILL');
      throw new Error(`socat did not create ${modemPath} and ${hostPath}: ${stderr.trim() || 'timed out'}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    modemPath,
    hostPath,
    get closed() {
      return exited;
    },
    async close() {
      if (!exited) killPeer(child, 'SIGTERM');
      await exit;
    },
  };
}

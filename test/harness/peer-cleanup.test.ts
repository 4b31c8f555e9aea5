/**
 * The test suite cleans up after itself. Peers run in their own process group,
 * die with the process that started them, the Perl SMSC also exits on its own (parent gone, or
 * its maximum runtime), and a run that leaves a process behind fails naming it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureBuilt, REPO_ROOT } from '../support/gateway-process.js';
import { processesOfRun } from '../support/leftover-peers.js';
import { PerlSmsc } from '../support/perl-smsc/perl-smsc.js';
import { killPeer, PEER_MARKER_ENV, RUN_ID_ENV, spawnPeer, stopPeers } from '../support/peer-process.js';

const started: ChildProcess[] = [];
const pidsToReap: number[] = [];
afterEach(async () => {
  await stopPeers(started.splice(0));
  for (const pid of pidsToReap.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone: what the test expected.
    }
  }
});

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function processGroup(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

async function until(check: () => boolean, what: string, maxMs = 10_000): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Runs a node script that prints `PID=<n>` for a process it started, then SIGKILLs the script. */
async function orphanFrom(script: string): Promise<number> {
  const parent = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(parent);
  let output = '';
  parent.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  await until(() => /PID=\d+/.test(output), 'the grandchild pid');
  const pid = Number(/PID=(\d+)/.exec(output)![1]);
  pidsToReap.push(pid);
  expect(alive(pid)).toBe(true);
  parent.kill('SIGKILL');
  return pid;
}

describe('spawnPeer', () => {
  it('starts the peer as the leader of its own process group and killPeer stops the whole group', async () => {
    const child = spawnPeer('sh', ['-c', 'sleep 300 & echo PID=$!; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
    started.push(child);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    await until(() => /PID=\d+/.test(output), 'the grandchild');
    const grandchild = Number(/PID=(\d+)/.exec(output)![1]);
    pidsToReap.push(grandchild);
    expect(processGroup(child.pid!)).toBe(child.pid);
    expect(processGroup(grandchild)).toBe(child.pid);
    killPeer(child, 'SIGTERM');
    await until(() => !alive(grandchild) && !alive(child.pid!), 'the group to exit');
  });

  it('marks the peer with this run\'s id, which the end-of-run check finds', async () => {
    const runId = process.env[RUN_ID_ENV];
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    const child = spawnPeer('sleep', ['300'], { stdio: 'ignore' });
    started.push(child);
    // Until setpriv has exec'd sleep: between fork and exec /proc shows the parent's environment, and
    // while exec swaps the image its cmdline reads empty (the check skips those as zombies).
    await until(() => alive(child.pid!) && readFileSync(`/proc/${child.pid}/comm`, 'latin1').trim() === 'sleep', 'the peer to be sleep');
    expect(readFileSync(`/proc/${child.pid}/environ`, 'latin1').split('\0')).toContain(`${PEER_MARKER_ENV}=${runId}`);
    expect(processesOfRun(runId!).map((p) => p.pid)).toContain(child.pid);
    expect(processesOfRun('another-run').map((p) => p.pid)).not.toContain(child.pid);
  });

  it('stops the peer when the process that started it is SIGKILLed (pdeathsig)', async () => {
    ensureBuilt();
    const helper = join(REPO_ROOT, 'dist', 'test', 'support', 'peer-process.js');
    const pid = await orphanFrom(
      `import { spawnPeer } from ${JSON.stringify(helper)}; const c = spawnPeer('sleep', ['300'], { stdio: 'ignore' }); console.log('PID=' + c.pid); setInterval(() => {}, 1000);`,
    );
    await until(() => !alive(pid), 'the orphaned peer to exit');
  });

  it('ends a peer at its maximum runtime', async () => {
    const child = spawnPeer('sleep', ['300'], { stdio: 'ignore', maxRuntimeS: 1 });
    started.push(child);
    const exit = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // coreutils timeout exits 124 when the time limit was reached.
    expect(exit).toBe(124);
  });
});

describe('the Perl SMSC ends by itself', () => {
  it('exits when its parent is gone, even when started without spawnPeer', async () => {
    const script = join(REPO_ROOT, 'test', 'support', 'perl-smsc', 'smsc.pl');
    const pid = await orphanFrom(
      `import { spawn } from 'node:child_process'; const c = spawn('perl', [${JSON.stringify(script)}, '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'], detached: true }); c.stdout.once('data', () => console.log('PID=' + c.pid)); setInterval(() => {}, 1000);`,
    );
    await until(() => !alive(pid), 'smsc.pl to notice its parent is gone');
  });

  it('exits after --max-runtime-s', async () => {
    const smsc = await PerlSmsc.start({ maxRuntimeS: 1 });
    try {
      expect(await smsc.waitFor('exit', 10_000)).toMatchObject([{ reason: 'max runtime' }]);
    } finally {
      await smsc.stop();
    }
  });
});

describe('the end-of-run check', () => {
  it('fails a vitest run that leaves a process running, names it and kills it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smsgate-leak-check-'));
    try {
      const config = join(dir, 'vitest.config.mjs');
      writeFileSync(config, `export default ${JSON.stringify({
        test: { include: ['test/harness/fixtures/leaky.fixture.ts'], globalSetup: [join(REPO_ROOT, 'test/support/leftover-peers.ts')], pool: 'forks' },
      })};\n`);
      const run = spawn(process.execPath, [join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', config, '--root', REPO_ROOT], {
        cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'],
      });
      started.push(run);
      let output = '';
      run.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      run.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const code = await new Promise<number | null>((resolve) => run.once('exit', (exitCode) => resolve(exitCode)));
      const leaked = Number(/LEAKED_PID=(\d+)/.exec(output)?.[1]);
      if (Number.isInteger(leaked)) pidsToReap.push(leaked);
      expect(code).toBe(1);
      expect(output).toContain('1 process(es) started by this test run were still running at its end');
      expect(output).toContain(`pid ${leaked}: sleep 300`);
      expect(alive(leaked)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

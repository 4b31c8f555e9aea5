/**
 * The `smsgate` command as npm installs it: node started on a symlink to dist/src/cli/main.js
 * (node_modules/.bin/smsgate, npx, npm i -g), the package installed into another project with
 * npm from the folder, and output into a pipe closed early.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, REPO_ROOT } from '../support/gateway-process.js';

const execFileAsync = promisify(execFile);
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const dir = mkdtempSync(join(tmpdir(), 'smsgate-installed-'));
const link = join(dir, 'bin', 'smsgate');

interface Run { code: number; stdout: string; stderr: string }

async function runFile(file: string, args: string[], options: { cwd?: string } = {}): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [file, ...args], { cwd: options.cwd ?? dir, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** npm without the machine's user config, whose `nodedir` warning is not the project's. */
async function npm(args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return execFileAsync('npm', args, { cwd, timeout: 120_000, env: { ...process.env, npm_config_userconfig: join(dir, 'no-user-npmrc') } });
}

beforeAll(() => {
  ensureBuilt();
  mkdirSync(join(dir, 'bin'));
  symlinkSync(join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js'), link);
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('smsgate through a symlink', () => {
  it('runs the command (it printed nothing before)', async () => {
    expect(await runFile(link, ['sms', 'inspect', '--text', 'hi'])).toEqual({
      code: 0, stdout: '{"encoding":"GSM-7","units":2,"parts":1,"text":"hi"}\n', stderr: '',
    });
  });

  it('--version prints the package version', async () => {
    expect(await runFile(link, ['--version'])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('--help, help COMMAND and COMMAND ACTION --help print usage on stdout and exit 0', async () => {
    const all = await runFile(link, ['--help']);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain('smsgate serve [--config FILE]');
    const help = await runFile(link, ['help', 'token']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain('smsgate token create --username U');
    expect(help.stdout).toContain('smsgate token revoke');
    const revoke = await runFile(link, ['token', 'revoke', '--help']);
    expect(revoke).toMatchObject({ code: 0, stderr: '' });
    expect(revoke.stdout).toMatch(/^usage: smsgate token revoke /);
    expect(revoke.stdout).not.toContain('token create');
    const serveHelp = (await runFile(link, ['serve', '--help'])).stdout;
    expect(serveHelp).toMatch(/^usage: smsgate serve \[--config FILE\]\n/);
    expect(serveHelp).toContain('config file, the first found: --config FILE, SMSGATE_CONFIG, ./smsgate.json, /etc/smsgate/smsgate.json');
  });

  it('an unknown command exits 2 with the usage', async () => {
    const unknown = await runFile(link, ['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("smsgate: unknown command 'frobnicate'");
    expect((await runFile(link, ['help', 'frobnicate'])).code).toBe(2);
  });
});

describe('smsgate installed with npm', () => {
  function appDir(name: string): string {
    const app = join(dir, name);
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: `app-${name}`, version: '1.0.0', private: true }));
    return app;
  }

  async function checkInstalled(app: string): Promise<void> {
    const bin = join(app, 'node_modules', '.bin', 'smsgate');
    expect(await runFile(bin, ['--version'], { cwd: app })).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
    const config = join(app, 'smsgate.json');
    writeFileSync(config, JSON.stringify({ database: { path: join(app, 'data', 'gw.sqlite') } }));
    const migrated = await runFile(bin, ['migrate', '--config', config, '--json'], { cwd: app });
    expect(migrated.code).toBe(0);
    expect((JSON.parse(migrated.stdout) as { applied: string[] }).applied.length).toBeGreaterThan(0);
  }

  it('node_modules/.bin/smsgate from `npm install <folder>` runs', async () => {
    const app = appDir('from-folder');
    await npm(['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', REPO_ROOT], app);
    await checkInstalled(app);
  }, 120_000);
  // The `npm pack` tarball, built from a clean copy and installed as a user would: test/cli/package-install.test.ts.
});

describe('output into a pipe the reader closed', () => {
  it('`smsgate webhook list | head` ends quietly, exit 0, no EPIPE stack trace', async () => {
    const config = join(dir, 'pipe.json');
    writeFileSync(config, JSON.stringify({ database: { path: join(dir, 'pipe', 'gw.sqlite') } }));
    // Admin commands never create a database: migrate makes it first.
    execFileSync(process.execPath, [join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js'), 'migrate', '--config', config], { cwd: dir, stdio: 'ignore' });
    // The built file itself, not the symlink: the pipe is what is under test here.
    const child = spawn(process.execPath, [join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js'), 'webhook', 'list', '--config', config], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    // Closed before the command writes its first line (it opens the database first).
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });
});

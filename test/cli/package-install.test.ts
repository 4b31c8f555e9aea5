/**
 * The package as a new user gets it: `npm pack` in a clean copy of the checkout (no dist/: the
 * prepack script builds it), the tarball installed into an empty folder with npm, then the
 * installed `smsgate` command: --help, `smsgate init`, `smsgate serve` on the config init wrote,
 * and /health answering. The tarball holds what runs and nothing else: no source maps (and no
 * compiled file pointing at one), nothing of test/ or bench/, with LICENSE, the CLI, the
 * migrations and the hardware profiles.
 *
 * Offline: the dependencies are copied from this checkout's node_modules into the empty folder
 * before the install, so `npm install --offline <tgz>` finds each one already installed and only
 * unpacks the tarball (npm's cache holds tarballs but no registry metadata to resolve from).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { REPO_ROOT } from '../support/gateway-process.js';

const execFileAsync = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'smsgate-package-'));
const clone = join(dir, 'clone');
const app = join(dir, 'app');
const npmEnv = { ...process.env, npm_config_userconfig: join(dir, 'no-user-npmrc'), npm_config_update_notifier: 'false' };

interface Run { code: number; stdout: string; stderr: string }

async function run(command: string, args: string[], cwd: string, timeout = 120_000): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileAsync(command, args, { cwd, timeout, env: npmEnv, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

let packedFiles: string[] = [];
let tarball = '';
let serve: ChildProcess | undefined;

beforeAll(async () => {
  // A clean clone: the files git knows (tracked, and new ones not ignored), no dist/, no data/.
  const listed = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], REPO_ROOT);
  expect(listed.code).toBe(0);
  for (const file of listed.stdout.split('\0').filter((f) => f !== '')) {
    try {
      mkdirSync(dirname(join(clone, file)), { recursive: true });
      cpSync(join(REPO_ROOT, file), join(clone, file));
    } catch (err) {
      // A file deleted in the working tree but still in the index is not part of the clone.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  // The build tools (tsc) of this checkout; npm pack runs prepack with them.
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(clone, 'node_modules'));
  const packed = await run('npm', ['pack', '--json', '--pack-destination', dir], clone, 300_000);
  expect(packed.code, packed.stderr).toBe(0);
  const [result] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
  tarball = join(dir, result.filename);
  packedFiles = result.files.map((f) => f.path);

  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'first-run', version: '1.0.0', private: true }));
  // The dependencies as `npm ci` installed them: a copy of the tree whose files are hard links
  // (`cp -al`: seconds, where copying 170 MB took half a minute), so npm may move or remove entries
  // in it without touching this checkout's. npm writes no installed file in place (it writes new
  // ones: its lockfile, the .bin links), which is what makes links safe here; the .bin folder and
  // the hidden lockfile are npm's own and go, so it writes them afresh.
  const linked = await run('cp', ['-al', join(REPO_ROOT, 'node_modules'), join(app, 'node_modules')], app);
  expect(linked.code, linked.stderr).toBe(0);
  rmSync(join(app, 'node_modules', '.bin'), { recursive: true, force: true });
  rmSync(join(app, 'node_modules', '.package-lock.json'), { force: true });
  const installed = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], app, 300_000);
  expect(installed.code, installed.stderr).toBe(0);
}, 900_000);

afterAll(async () => {
  if (serve !== undefined && serve.exitCode === null) {
    const exited = new Promise((resolve) => serve?.once('exit', resolve));
    serve.kill('SIGKILL');
    await exited;
  }
  // A tree of links to node_modules and a tarball: many entries to delete on a loaded machine.
  rmSync(dir, { recursive: true, force: true });
}, 300_000);

function filesUnder(root: string): string[] {
  return readdirSync(root, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('the npm package', () => {
  it('packs what runs: the CLI, migrations, hardware profiles, LICENSE; no source maps, no tests, no benches', () => {
    expect(packedFiles).toEqual(expect.arrayContaining([
      'LICENSE', 'README.md', 'CHANGELOG.md', 'package.json', 'dist/src/cli/main.js', 'dist/src/index.js', 'dist/src/index.d.ts',
      'dist/migrations/1763740000000-initial-schema.js', 'hardware/generic.json', 'hardware/quectel-ec25.json',
      'config/default.json', 'config/smsgate.schema.json', 'config/smpp-carrier.example.json', 'config/smsgate.service',
    ]));
    expect(packedFiles.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(packedFiles.filter((f) => /^(dist\/)?(test|bench)\//.test(f))).toEqual([]);
    expect(packedFiles.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(packedFiles.filter((f) => f.endsWith('.png') || f.includes('tsbuildinfo'))).toEqual([]);
    // Every top-level entry is one `files` names (npm adds package.json, README, LICENSE, CHANGELOG).
    expect([...new Set(packedFiles.map((f) => f.split('/')[0]))].sort()).toEqual(
      expect.arrayContaining(['CHANGELOG.md', 'LICENSE', 'README.md', 'config', 'dist', 'hardware', 'package.json']),
    );
    for (const top of new Set(packedFiles.map((f) => f.split('/')[0]))) {
      expect(['CHANGELOG.md', 'LICENSE', 'README.md', 'config', 'dist', 'docs', 'hardware', 'package.json']).toContain(top);
    }
  });

  it('installs with MIT LICENSE and no compiled file points at a source map it does not ship', () => {
    const installed = join(app, 'node_modules', 'smsgate');
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toContain('Copyright (c) 2026 smsgate developers');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ license: 'MIT', repository: { url: expect.stringContaining('github.com/smsgate/smsgate') }, bugs: { url: expect.any(String) } });
    const compiled = filesUnder(join(installed, 'dist')).filter((f) => f.endsWith('.js'));
    expect(compiled.length).toBeGreaterThan(100);
    expect(compiled.filter((f) => readFileSync(f, 'utf8').includes('sourceMappingURL'))).toEqual([]);
  });

  it('`npx smsgate --help` prints the commands and where the config is looked for', async () => {
    const help = await run('npx', ['--no-install', 'smsgate', '--help'], app);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('smsgate init [--dir DIR]');
    expect(help.stdout).toContain('--config FILE, SMSGATE_CONFIG, ./smsgate.json, /etc/smsgate/smsgate.json');
  });

  it('a first `smsgate init` and `smsgate serve` from the installed package answer /health', async () => {
    const bin = join(app, 'node_modules', '.bin', 'smsgate');
    const work = join(app, 'first');
    mkdirSync(work);
    // No config anywhere yet: the message names the places and init.
    const none = await run(bin, ['config', 'check'], work);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no config file found');
    expect(none.stderr).toContain('smsgate init');

    const init = await run(bin, ['init'], work);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`wrote ${join(work, 'smsgate.json')}`);
    // The ports init chose may be taken on a shared machine: the test moves them, as an operator would.
    const file = join(work, 'smsgate.json');
    const config = JSON.parse(readFileSync(file, 'utf8')) as { api: { port: number }; admin: { port: number } };
    config.api.port = await freePort();
    config.admin.port = await freePort();
    writeFileSync(file, JSON.stringify(config, null, 2));

    serve = spawn(bin, ['serve'], { cwd: work, env: npmEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    serve.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    serve.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const deadline = Date.now() + 60_000;
    let health: Response | undefined;
    while (health === undefined && Date.now() < deadline && serve.exitCode === null) {
      health = await fetch(`http://127.0.0.1:${config.api.port}/health`).catch(() => undefined);
      if (health === undefined) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(health?.status, output).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${config.admin.port}/ready`);
    expect(ready.status).toBe(200);
    // The database is where init said: data/ beside the config file.
    expect(readdirSync(join(work, 'data'))).toContain('smsgate.sqlite');

    const exited = new Promise<number | null>((resolve) => serve?.once('exit', (code) => resolve(code)));
    serve.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 120_000);
});

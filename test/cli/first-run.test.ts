/**
 * A new operator's first commands, through the built `smsgate` command (node dist/src/cli/main.js)
 * in real directories: `init` and where the config is then found, `config check` refusing what
 * `serve` would (a port in use, named by key), `serve` naming api.port when it is taken, admin
 * commands that need none of a transport's secrets, and the user commands: the password minimum,
 * the warning for a user made without --admin, and `user set-admin`, checked on the real API.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/gateway/config.js';
import { createGateway, type Gateway } from '../../src/index.js';
import { silentLogger } from '../../src/common/log.js';
import { freePort } from '../support/free-port.js';
import { ensureBuilt, REPO_ROOT } from '../support/gateway-process.js';

// Each command is a node process (about a second, several on a loaded machine); a test runs up to nine.
// The groups below share nothing (each its own directory, config and ports), so two run at once
// (describe.concurrent, maxConcurrency 2: one command per core of a 2-core machine, each no slower
// than alone there): the file took minutes one command at a time. Within a group the tests run in
// order (it.sequential): they build on each other.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000, maxConcurrency: 2 });

const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
const dir = mkdtempSync(join(tmpdir(), 'smsgate-first-run-'));
// Without SMSGATE_CONFIG, whatever the test runner was started with.
const { SMSGATE_CONFIG: _ignored, ...baseEnv } = process.env;

interface Run { code: number; stdout: string; stderr: string }

function smsgate(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], { cwd: options.cwd ?? dir, env: { ...baseEnv, ...options.env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
    });
    child.stdin?.end(options.input ?? '');
  });
}

function occupy(port: number, host = '127.0.0.1'): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

const close = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

beforeAll(() => ensureBuilt(), 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.concurrent('smsgate init', () => {
  const site = join(dir, 'site');

  it.sequential('writes a starter smsgate.json with a data directory beside it, and prints the next three commands', async () => {
    const init = await smsgate(['init', '--dir', site]);
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    const file = join(site, 'smsgate.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      $schema: 'https://raw.githubusercontent.com/smsgate/smsgate/main/config/smsgate.schema.json',
      database: { path: 'data/smsgate.sqlite' },
      api: { host: '127.0.0.1', port: 8080 },
      transports: [{ name: 'sim', type: 'simulator' }],
      routes: [{ prefix: '', transport: 'sim' }],
      admin: { host: '127.0.0.1', port: 8081 },
    });
    expect(statSync(join(site, 'data')).isDirectory()).toBe(true);
    const steps = init.stdout.split('\n').filter((line) => /^ {2}\d\. /.test(line));
    expect(steps).toHaveLength(3);
    // Not the working directory's smsgate.json: every command names it.
    expect(steps[0]).toContain(`smsgate user create --client demo --username admin --password-stdin --admin --config ${file}`);
    expect(steps[0]).toContain('smsgate token create --username admin');
    expect(steps[1]).toBe(`  2. smsgate serve --config ${file}`);
    expect(steps[2]).toMatch(/^ {2}3\. curl -s -X POST http:\/\/127\.0\.0\.1:8080\/v1\/campaign -H "Authorization: Bearer \$TOKEN"/);
    // The database is beside the file whatever the working directory.
    expect(loadConfig(file, {}).database.path).toBe(join(site, 'data', 'smsgate.sqlite'));
  });

  it.sequential('refuses to overwrite an existing smsgate.json, exit 1 naming it, and changes nothing', async () => {
    const file = join(site, 'smsgate.json');
    writeFileSync(file, '{"api":{"port":9999}}');
    const again = await smsgate(['init'], { cwd: site });
    expect(again).toEqual({ code: 1, stdout: '', stderr: `smsgate: ${file} already exists: not overwritten (remove it, or init another --dir)\n` });
    expect(readFileSync(file, 'utf8')).toBe('{"api":{"port":9999}}');
  });

  it.sequential('in the working directory, the printed commands need no --config: ./smsgate.json is found', async () => {
    const here = join(dir, 'here');
    mkdirSync(here);
    const init = await smsgate(['init'], { cwd: here });
    expect(init.code).toBe(0);
    expect(init.stdout).toContain('  2. smsgate serve\n');
    const check = await smsgate(['config', 'check', '--json'], { cwd: here, env: { HOME: here } });
    // 8080 or 8081 may be taken on this machine: then the check says so by key, which also shows it read ./smsgate.json.
    if (check.code === 0) expect(JSON.parse(check.stdout)).toMatchObject({ file: 'smsgate.json', valid: true, config: { database: { path: join(here, 'data', 'smsgate.sqlite') } } });
    else expect(check.stderr).toMatch(/^smsgate: CONFIG_INVALID: smsgate\.json: (api|admin)\.port 808[01] is in use/);
  });
});

describe.concurrent('finding the config', () => {
  it.sequential('with none anywhere: exit 1 naming the four places and smsgate init', async () => {
    expect(existsSync('/etc/smsgate/smsgate.json')).toBe(false);
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const check = await smsgate(['config', 'check'], { cwd: empty });
    expect(check.code).toBe(1);
    expect(check.stderr).toContain('no config file found: give --config FILE, set SMSGATE_CONFIG, or put one at ./smsgate.json or /etc/smsgate/smsgate.json');
    expect(check.stderr).toContain('`smsgate init` writes a starter ./smsgate.json');
    const create = await smsgate(['client', 'create', '--name', 'x'], { cwd: empty });
    expect(create.code).toBe(1);
    expect(create.stderr).toContain('no config file found');
  });

  it.sequential('SMSGATE_CONFIG before ./smsgate.json; the source checkout falls back to config/default.json', async () => {
    const other = join(dir, 'other.json');
    writeFileSync(other, JSON.stringify({ api: { port: 0 } }));
    // A working directory with a ./smsgate.json of its own, which SMSGATE_CONFIG must win over.
    const withLocal = join(dir, 'with-local');
    mkdirSync(withLocal);
    writeFileSync(join(withLocal, 'smsgate.json'), JSON.stringify({ api: { port: 0 } }));
    const viaEnv = await smsgate(['config', 'check', '--json'], { cwd: withLocal, env: { SMSGATE_CONFIG: other } });
    expect(JSON.parse(viaEnv.stdout)).toMatchObject({ file: other, config: { api: { port: 0 } } });
    const checkout = await smsgate(['config', 'check', '--json'], { cwd: REPO_ROOT });
    if (checkout.code === 0) expect(JSON.parse(checkout.stdout)).toMatchObject({ file: 'config/default.json' });
    else expect(checkout.stderr).toMatch(/^smsgate: CONFIG_INVALID: config\/default\.json: (api|admin)\.port 808[01] is in use/);
  });
});

describe.concurrent('ports in use', () => {
  let apiPort = 0;
  let adminPort = 0;
  let file = '';

  beforeAll(async () => {
    apiPort = await freePort();
    adminPort = await freePort();
    file = join(dir, 'ports.json');
    writeFileSync(file, JSON.stringify({ database: { path: 'ports/gw.sqlite' }, api: { port: apiPort }, admin: { port: adminPort } }));
  });

  it.sequential('config check names api.port or admin.port in use, with the file, and passes once both are free', async () => {
    const api = await occupy(apiPort);
    try {
      expect(await smsgate(['config', 'check', '--config', file])).toEqual({
        code: 1, stdout: '', stderr: `smsgate: CONFIG_INVALID: ${file}: api.port ${apiPort} is in use (api.host 127.0.0.1)\n`,
      });
    } finally {
      await close(api);
    }
    const admin = await occupy(adminPort);
    try {
      const check = await smsgate(['config', 'check', '--config', file]);
      expect(check.stderr).toBe(`smsgate: CONFIG_INVALID: ${file}: admin.port ${adminPort} is in use (admin.host 127.0.0.1)\n`);
    } finally {
      await close(admin);
    }
    expect((await smsgate(['config', 'check', '--config', file])).code).toBe(0);
    // Nothing was opened: no database.
    expect(existsSync(join(dir, 'ports'))).toBe(false);
  });

  it.sequential('serve exits 1 naming api.port when the API port is taken', async () => {
    const api = await occupy(apiPort);
    try {
      const serve = await smsgate(['serve', '--config', file]);
      expect(serve.code).toBe(1);
      expect(serve.stderr).toBe(`smsgate: ${file}: api.port ${apiPort} is in use (api.host 127.0.0.1)\n`);
    } finally {
      await close(api);
    }
  });

  it.sequential('an unknown modem profile stops config check and serve with its key and the known profiles', async () => {
    const modems = join(dir, 'modems.json');
    writeFileSync(modems, JSON.stringify({ database: { path: 'modems/gw.sqlite' }, api: { port: 0 }, transports: [{ name: 'm', type: 'modem', devices: [{ path: '/dev/null', profile: 'sim900' }] }] }));
    const expected = `${modems}: transports[0].devices[0].profile: unknown modem profile "sim900" (known: generic, huawei-e3372, quectel-ec25, sim7600, sim800)`;
    expect((await smsgate(['config', 'check', '--config', modems])).stderr).toBe(`smsgate: CONFIG_INVALID: ${expected}\n`);
    const serve = await smsgate(['serve', '--config', modems]);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain(expected);
  });
});

describe.concurrent('admin commands and transport secrets', () => {
  it.sequential('client create runs without the SMPP password it never uses; config check and serve need it', async () => {
    const file = join(dir, 'carrier.json');
    writeFileSync(file, JSON.stringify({
      database: { path: 'carrier/gw.sqlite' },
      api: { port: 0 },
      transports: [{ name: 'carrier', type: 'smpp', host: '127.0.0.1', port: 2775, systemId: 'esme', password: '${SMPP_PASSWORD}' }],
    }));
    expect(await smsgate(['migrate', '--config', file])).toMatchObject({ code: 0, stderr: '' });
    expect(await smsgate(['client', 'create', '--name', 'acme', '--config', file])).toMatchObject({ code: 0, stderr: '' });
    const missing = `${file}: transports[0].password: environment variable SMPP_PASSWORD is not set`;
    expect((await smsgate(['config', 'check', '--config', file])).stderr).toBe(`smsgate: CONFIG_INVALID: ${missing}\n`);
    const serve = await smsgate(['serve', '--config', file]);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain(missing);
  });
});

describe.concurrent('users', () => {
  const file = join(dir, 'users.json');
  let gateway: Gateway | undefined;
  let baseUrl = '';

  beforeAll(async () => {
    writeFileSync(file, JSON.stringify({ database: { path: 'users/gw.sqlite' }, api: { port: 0 } }));
    expect((await smsgate(['migrate', '--config', file])).code).toBe(0);
    expect((await smsgate(['client', 'create', '--name', 'acme', '--config', file])).code).toBe(0);
    gateway = await createGateway(loadConfig(file, {}), { logger: silentLogger() });
    await gateway.start();
    const where = gateway.address() as { host: string; port: number };
    baseUrl = `http://${where.host}:${where.port}`;
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it.sequential('a password under 12 characters is a usage error naming the minimum, for create and set-password', async () => {
    const create = await smsgate(['user', 'create', '--client', 'acme', '--username', 'short', '--password', 'elevenchars', '--config', file]);
    expect(create.code).toBe(2);
    expect(create.stderr).toMatch(/^smsgate: the password must have at least 12 characters\nusage: smsgate user create /);
    const stdin = await smsgate(['user', 'create', '--client', 'acme', '--username', 'short', '--password-stdin', '--config', file], { input: 'elevenchars\n' });
    expect(stdin.code).toBe(2);
    expect((await smsgate(['user', 'list', '--config', file, '--json'])).stdout).not.toContain('short');
    const twelve = await smsgate(['user', 'create', '--client', 'acme', '--username', 'ok', '--password', 'twelve chars', '--admin', '--config', file]);
    expect(twelve).toMatchObject({ code: 0, stderr: '' });
    const change = await smsgate(['user', 'set-password', '--username', 'ok', '--password', 'too short', '--config', file]);
    expect(change.code).toBe(2);
    expect(change.stderr).toContain('the password must have at least 12 characters');
  });

  it.sequential('user create without --admin warns that the user cannot call the API; set-admin makes it one, and its token works', async () => {
    const created = await smsgate(['user', 'create', '--client', 'acme', '--username', 'bob', '--password-stdin', '--config', file], { input: 'a long enough password\n' });
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^created user bob \(id \d+\) of client acme\n$/);
    expect(created.stderr).toBe(
      'smsgate: warning: bob is not an administrator, and only administrators may call the API (every request with its tokens is answered 403); ' +
        'make it one with: smsgate user set-admin --username bob\n',
    );
    const token = (await smsgate(['token', 'create', '--username', 'bob', '--config', file])).stdout.trim();
    const campaigns = (): Promise<number> => fetch(`${baseUrl}/v1/campaign/00000000-0000-4000-8000-000000000000`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
    expect(await campaigns()).toBe(403);

    expect(await smsgate(['user', 'set-admin', '--username', 'bob', '--config', file])).toEqual({
      code: 0, stdout: 'user bob is now an administrator: it may call the API\n', stderr: '',
    });
    expect(await campaigns()).toBe(404);
    expect((await smsgate(['user', 'set-admin', '--username', 'bob', '--config', file])).stdout).toBe('user bob was already an administrator: it may call the API\n');
    expect(JSON.parse((await smsgate(['user', 'set-admin', '--username', 'bob', '--revoke', '--config', file, '--json'])).stdout)).toEqual({
      username: 'bob', isAdmin: false, changed: true,
    });
    expect(await campaigns()).toBe(403);
    expect(await smsgate(['user', 'set-admin', '--username', 'nobody', '--config', file])).toEqual({ code: 1, stdout: '', stderr: 'smsgate: no user named "nobody"\n' });
  });
});

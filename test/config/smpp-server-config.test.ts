/**
 * The `smppServer` section: off without it, defaults applied when it is there, each broken key
 * refused with the file and the key, its port never the API's or the admin listener's, its TLS
 * files resolved against the file's directory and checked readable (and a certificate with its
 * key) as `config check` and a gateway's start check them, `config check` printing the section
 * and refusing its port in use, and a change of it not applied by a reload (a restart is needed).
 */
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, copyFileSync as copyFile, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { captureCliOutput } from '../support/cli-output.js';
import { isGatewayError } from '../../src/common/errors.js';
import { restartOnlyChanges } from '../../src/gateway/config-diff.js';
import { loadConfig, resolveConfigFromObject, smppServerTlsProblem } from '../../src/gateway/config.js';
import { SMPP_SERVER_DEFAULTS } from '../../src/smpp-server/contracts.js';

const dir = mkdtempSync(join(tmpdir(), 'smsgate-smpp-server-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fixtures = join(import.meta.dirname, '..', 'transports', 'smpp', 'fixtures');

function write(name: string, body: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof body === 'string' ? body : JSON.stringify(body));
  return file;
}

function rejection(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (isGatewayError(err, 'CONFIG_INVALID')) return err.message;
    throw err;
  }
  throw new Error('config was accepted');
}

describe('smppServer section', () => {
  it('is off without the section', () => {
    const config = resolveConfigFromObject({}, 'c.json', {});
    expect(config.smppServer).toBeUndefined();
  });

  it('takes the documented example and applies the defaults to what it leaves out', () => {
    const file = write('defaults.json', { smppServer: { host: '127.0.0.1', port: 2775 } });
    expect(loadConfig(file, {}).smppServer).toEqual({
      host: '127.0.0.1',
      port: 2775,
      windowSize: 100,
      enquireLinkIntervalMs: SMPP_SERVER_DEFAULTS.enquireLinkIntervalMs,
      responseTimeoutMs: SMPP_SERVER_DEFAULTS.responseTimeoutMs,
      receiptRetentionHours: 72,
    });
    // An empty section turns the server on at 127.0.0.1:2775.
    expect(resolveConfigFromObject({ smppServer: {} }, 'c.json', {}).smppServer).toMatchObject({ host: '127.0.0.1', port: 2775, windowSize: 100 });
  });

  it('keeps every value given', () => {
    const given = { host: '0.0.0.0', port: 2776, windowSize: 10, enquireLinkIntervalMs: 5_000, responseTimeoutMs: 2_000, receiptRetentionHours: 24 };
    expect(resolveConfigFromObject({ smppServer: given }, 'c.json', {}).smppServer).toEqual(given);
  });

  it.each([
    [{ port: 65536 }, 'smppServer.port: must be <= 65535'],
    [{ port: -1 }, 'smppServer.port: must be >= 0'],
    [{ port: '2775' }, 'smppServer.port: must be integer'],
    [{ host: '' }, 'smppServer.host: must NOT have fewer than 1 characters'],
    [{ windowSize: 0 }, 'smppServer.windowSize: must be >= 1'],
    [{ windowSize: 1001 }, 'smppServer.windowSize: must be <= 1000'],
    [{ enquireLinkIntervalMs: 0 }, 'smppServer.enquireLinkIntervalMs: must be >= 1'],
    [{ responseTimeoutMs: -5 }, 'smppServer.responseTimeoutMs: must be >= 1'],
    [{ receiptRetentionHours: 0 }, 'smppServer.receiptRetentionHours: must be >= 1'],
    [{ receiptRetentionHours: 1.5 }, 'smppServer.receiptRetentionHours: must be integer'],
    [{ tls: { certFile: 'c.pem' } }, 'smppServer.tls.keyFile: is required'],
    [{ tls: { certFile: 'c.pem', keyFile: 'k.pem', ca: 'x' } }, 'smppServer.tls.ca: unknown key "ca" at /smppServer/tls'],
    [{ windowsize: 10 }, 'smppServer.windowsize: unknown key "windowsize" at /smppServer: did you mean "windowSize"?'],
  ])('refuses %j naming the file and the key', (section, message) => {
    const file = write('bad.json', { smppServer: section });
    expect(rejection(() => loadConfig(file, {}))).toBe(`${file}: ${message}`);
  });

  it('refuses a port the API or the admin listener has, and takes 0 (a free port) beside them', () => {
    const file = write('clash-api.json', { api: { port: 9000 }, smppServer: { port: 9000 } });
    expect(rejection(() => loadConfig(file, {}))).toBe(`${file}: smppServer.port: must differ from api.port (9000)`);
    const admin = write('clash-admin.json', { api: { port: 9000 }, admin: { port: 9001 }, smppServer: { port: 9001 } });
    expect(rejection(() => loadConfig(admin, {}))).toBe(`${admin}: smppServer.port: must differ from admin.port (9001)`);
    expect(resolveConfigFromObject({ api: { port: 0 }, admin: { port: 0 }, smppServer: { port: 0 } }, 'c.json', {}).smppServer?.port).toBe(0);
  });
});

describe('smppServer.tls', () => {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  copyFile(join(fixtures, 'smsc-cert.pem'), certFile);
  copyFile(join(fixtures, 'smsc-key.pem'), keyFile);

  it('resolves relative files against the config file and takes a readable certificate and its key', () => {
    const file = write('tls.json', { smppServer: { tls: { certFile: 'cert.pem', keyFile: './key.pem' } } });
    const config = loadConfig(file, {});
    expect(config.smppServer?.tls).toEqual({ certFile, keyFile });
    expect(smppServerTlsProblem(config)).toBeNull();
  });

  it('names the key whose file cannot be read', () => {
    const missing = loadConfig(write('tls-missing.json', { smppServer: { tls: { certFile: 'cert.pem', keyFile: 'nope.pem' } } }), {});
    expect(smppServerTlsProblem(missing)).toEqual({ key: 'smppServer.tls.keyFile', what: `${join(dir, 'nope.pem')} cannot be read (ENOENT)` });
    const noCert = loadConfig(write('tls-nocert.json', { smppServer: { tls: { certFile: 'gone.pem', keyFile: 'key.pem' } } }), {});
    expect(smppServerTlsProblem(noCert)).toEqual({ key: 'smppServer.tls.certFile', what: `${join(dir, 'gone.pem')} cannot be read (ENOENT)` });
    if (process.getuid?.() !== 0) {
      // Root reads any file: the permission case only means something for another user.
      const locked = join(dir, 'locked.pem');
      copyFile(keyFile, locked);
      chmodSync(locked, 0o000);
      const config = loadConfig(write('tls-locked.json', { smppServer: { tls: { certFile: 'cert.pem', keyFile: 'locked.pem' } } }), {});
      expect(smppServerTlsProblem(config)).toEqual({ key: 'smppServer.tls.keyFile', what: `${locked} cannot be read (EACCES)` });
    }
  });

  it('refuses a key that is not the certificate\'s', () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    writeFileSync(join(dir, 'other-key.pem'), other);
    const config = loadConfig(write('tls-mismatch.json', { smppServer: { tls: { certFile: 'cert.pem', keyFile: 'other-key.pem' } } }), {});
    const problem = smppServerTlsProblem(config);
    expect(problem?.key).toBe('smppServer.tls');
    expect(problem?.what).toMatch(/^\S+cert\.pem and \S+other-key\.pem are not a PEM certificate and its private key \(.+\)$/);
  });

  it('has nothing to check without tls or without the section', () => {
    expect(smppServerTlsProblem(resolveConfigFromObject({ smppServer: {} }, 'c.json', {}))).toBeNull();
    expect(smppServerTlsProblem(resolveConfigFromObject({}, 'c.json', {}))).toBeNull();
  });
});

describe('reload', () => {
  it('does not apply a change of smppServer: it is listed as needing a restart', () => {
    const running = resolveConfigFromObject({ smppServer: { port: 2775 } }, 'c.json', {});
    expect(restartOnlyChanges(running, resolveConfigFromObject({ smppServer: { port: 2776 } }, 'c.json', {}))).toEqual(['smppServer']);
    expect(restartOnlyChanges(running, resolveConfigFromObject({}, 'c.json', {}))).toEqual(['smppServer']);
    expect(restartOnlyChanges(resolveConfigFromObject({}, 'c.json', {}), running)).toEqual(['smppServer']);
    expect(restartOnlyChanges(running, resolveConfigFromObject({ smppServer: { port: 2775 } }, 'c.json', {}))).toEqual([]);
  });
});

describe('smsgate config check', () => {
  const check = (...args: string[]) => captureCliOutput(() => main(['config', 'check', ...args]));
  const base = (name: string, smppServer: unknown): string =>
    write(name, { api: { port: 0 }, database: { path: join(dir, 'gw.sqlite') }, smppServer });

  it('prints the section with its defaults', async () => {
    const checked = await check('--config', base('check-ok.json', { port: 0 }), '--json');
    expect(checked.stderr).toBe('');
    expect(checked.code).toBe(0);
    const { config } = JSON.parse(checked.stdout) as { config: { smppServer: unknown } };
    expect(config.smppServer).toEqual({ host: '127.0.0.1', port: 0, windowSize: 100, enquireLinkIntervalMs: 30_000, responseTimeoutMs: 10_000, receiptRetentionHours: 72 });
  });

  it('refuses TLS files it cannot read, and a port in use, naming the keys (exit 1)', async () => {
    copyFile(join(fixtures, 'smsc-cert.pem'), join(dir, 'cert.pem'));
    const noKey = base('check-nokey.json', { port: 0, tls: { certFile: 'cert.pem', keyFile: 'absent.pem' } });
    const tls = await check('--config', noKey);
    expect(tls.code).toBe(1);
    expect(tls.stderr).toBe(`smsgate: CONFIG_INVALID: ${noKey}: smppServer.tls.keyFile: ${join(dir, 'absent.pem')} cannot be read (ENOENT)\n`);

    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    try {
      const port = (taken.address() as { port: number }).port;
      const inUse = base('check-inuse.json', { port });
      const listened = await check('--config', inUse);
      expect(listened.code).toBe(1);
      expect(listened.stderr).toBe(`smsgate: CONFIG_INVALID: ${inUse}: smppServer.port ${port} is in use (smppServer.host 127.0.0.1)\n`);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});

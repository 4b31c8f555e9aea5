import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, resolveConfigFromObject } from '../../src/gateway/config.js';
import { isGatewayError } from '../../src/common/errors.js';
import { DEFAULT_WEBHOOK_CONFIG } from '../../src/webhooks/config.js';

const dir = mkdtempSync(join(tmpdir(), 'smsgate-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeConfig(name: string, body: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof body === 'string' ? body : JSON.stringify(body));
  return file;
}

/** The CONFIG_INVALID message of a config that must be rejected. */
function rejection(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (isGatewayError(err, 'CONFIG_INVALID')) return err.message;
    throw err;
  }
  throw new Error('config was accepted');
}

const smpp = { name: 'carrier', type: 'smpp', host: '127.0.0.1', port: 2775, systemId: 'esme', password: 'secret' };

describe('loadConfig', () => {
  it('loads the shipped config/default.json with every section defaulted', () => {
    const config = loadConfig('config/default.json', {});
    // "../data/smsgate.sqlite", relative to config/: the checkout's data/ (relative paths follow the file).
    const root = join(import.meta.dirname, '..', '..');
    expect(config.database).toEqual({ path: join(root, 'data', 'smsgate.sqlite'), synchronous: 'FULL', keyFile: join(root, 'data', 'smsgate.key') });
    expect(config.api).toEqual({ host: '127.0.0.1', port: 8080, maxBodyBytes: 67108864 });
    expect(config.auth).toMatchObject({
      patPrefix: 'smsgate', clientId: 'messaging-api', accessTokenSeconds: 300, refreshTokenSeconds: 1800,
      legacy: { clientId: 'legacy-api', accessTokenSeconds: 120, refreshTokenSeconds: 1200 },
    });
    expect(config.engine).toEqual({
      batchSize: 500, pollIntervalMs: 200, maxAttempts: 5, retryBaseDelayMs: 2000, retryMaxDelayMs: 300000,
      unmatchedReceiptTtlMs: 172800000, drainTimeoutMs: 10000,
    });
    expect(config.webhooks).toEqual({ timeoutMs: 10000, retryDelaysMs: [2000, 4000, 8000], breakerOpenMs: 30000, breakerFailures: 2, concurrency: 16, redriveWithinMs: 86400000 });
    expect(config.logging).toEqual({ level: 'info', logMessageText: false });
    expect(config.processing).toEqual({ pollIntervalMs: 200 });
    expect(config.transports).toEqual([{ name: 'sim', type: 'simulator' }]);
    expect(config.routes).toEqual([{ prefix: '', transport: 'sim' }]);
  });

  it('gives every loaded config its own copy of a defaulted array, never the sender defaults themselves', () => {
    const first = loadConfig('config/default.json', {});
    first.webhooks.retryDelaysMs.push(16_000);
    expect(loadConfig('config/default.json', {}).webhooks.retryDelaysMs).toEqual([2000, 4000, 8000]);
    expect(DEFAULT_WEBHOOK_CONFIG.retryDelaysMs).toEqual([2000, 4000, 8000]);
  });

  it('takes the path from SMSGATE_CONFIG when none is given', () => {
    const file = writeConfig('from-env.json', { api: { port: 9090 } });
    expect(loadConfig(undefined, { SMSGATE_CONFIG: file }).api.port).toBe(9090);
  });

  it('an empty object means the embedded defaults, except the admin listener that only default.json turns on', () => {
    const { database, ...config } = resolveConfigFromObject({}, 'empty.json', {});
    const { admin, database: shippedDatabase, ...shipped } = loadConfig('config/default.json', {});
    expect(config).toEqual(shipped);
    expect(database).toEqual({ path: 'data/smsgate.sqlite', synchronous: 'FULL', keyFile: 'data/smsgate.key' });
    expect(shippedDatabase.path.endsWith(join('data', 'smsgate.sqlite'))).toBe(true);
    expect(config.admin).toBeUndefined();
    expect(admin).toEqual({ host: '127.0.0.1', port: 8081, allowedHosts: [] });
  });

  it('does not share default arrays between two loads', () => {
    const first = resolveConfigFromObject({}, 'a.json', {});
    first.webhooks.retryDelaysMs.push(1);
    expect(resolveConfigFromObject({}, 'b.json', {}).webhooks.retryDelaysMs).toEqual([2000, 4000, 8000]);
  });

  it('names the file when it is missing or not JSON', () => {
    const missing = join(dir, 'nope.json');
    expect(rejection(() => loadConfig(missing, {}))).toBe(`${missing}: file not found`);
    const broken = writeConfig('broken.json', '{ "api": ');
    expect(rejection(() => loadConfig(broken, {}))).toMatch(new RegExp(`^${broken}: not valid JSON: `));
  });

  it('derives the key file from the database path unless given', () => {
    expect(resolveConfigFromObject({ database: { path: '/var/lib/smsgate/gw.db' } }, 'c.json', {}).database.keyFile).toBe('/var/lib/smsgate/gw.key');
    expect(resolveConfigFromObject({ database: { path: 'x.sqlite', keyFile: '/etc/k' } }, 'c.json', {}).database.keyFile).toBe('/etc/k');
  });
});

describe('environment interpolation', () => {
  it('replaces ${NAME} in strings anywhere in the file', () => {
    const file = writeConfig('env.json', { transports: [{ ...smpp, password: '${SMPP_PASSWORD}', host: 'smsc-${REGION}.example' }] });
    const config = loadConfig(file, { SMPP_PASSWORD: 's3cr3t', REGION: 'eu' });
    expect(config.transports[0]).toMatchObject({ password: 's3cr3t', host: 'smsc-eu.example' });
  });

  it('names the key whose variable is not set', () => {
    const file = writeConfig('env-missing.json', { transports: [{ ...smpp, password: '${SMPP_PASSWORD}' }] });
    expect(rejection(() => loadConfig(file, {}))).toBe(`${file}: transports[0].password: environment variable SMPP_PASSWORD is not set`);
  });

  it('uses the fallback of ${NAME:-fallback} when unset or empty, and $${ as a literal', () => {
    const object = { database: { path: '${DB:-data/other.sqlite}' }, auth: { issuer: 'a$${B}c' } };
    expect(resolveConfigFromObject(object, 'f.json', {}).database.path).toBe('data/other.sqlite');
    expect(resolveConfigFromObject(object, 'f.json', { DB: '' }).database.path).toBe('data/other.sqlite');
    expect(resolveConfigFromObject(object, 'f.json', { DB: '/x.db' }).database.path).toBe('/x.db');
    expect(resolveConfigFromObject(object, 'f.json', {}).auth.issuer).toBe('a${B}c');
  });

  it('an empty variable is used as given when there is no fallback', () => {
    expect(resolveConfigFromObject({ transports: [{ ...smpp, password: '${P}' }] }, 'g.json', { P: '' }).transports[0]).toMatchObject({ password: '' });
  });

  it('rejects a malformed reference', () => {
    expect(rejection(() => resolveConfigFromObject({ auth: { issuer: '${1BAD}' } }, 'h.json', {}))).toBe('h.json: auth.issuer: "${1BAD}" is not a valid environment variable reference');
  });
});

describe('validation errors name the file and the key', () => {
  const cases: [string, unknown, string][] = [
    ['an unknown top-level key', { apii: {} }, 'v.json: apii: unknown key "apii" at /: did you mean "api"?'],
    ['an unknown nested key', { auth: { legacy: { clientID: 'x' } } }, 'v.json: auth.legacy.clientID: unknown key "clientID" at /auth/legacy: did you mean "clientId"?'],
    ['a port out of range', { api: { port: 70000 } }, 'v.json: api.port: must be <= 65535'],
    ['a string where a number goes', { engine: { batchSize: '500' } }, 'v.json: engine.batchSize: must be integer'],
    ['a zero max attempts', { engine: { maxAttempts: 0 } }, 'v.json: engine.maxAttempts: must be >= 1'],
    ['a bad log level', { logging: { level: 'loud' } }, 'v.json: logging.level: must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent"'],
    ['a bad synchronous mode', { database: { synchronous: 'OFF' } }, 'v.json: database.synchronous: must be one of "FULL", "NORMAL"'],
    ['a PAT prefix with a space', { auth: { patPrefix: 'my app' } }, 'v.json: auth.patPrefix: must match pattern "^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"'],
    ['an empty PAT prefix', { auth: { patPrefix: '' } }, 'v.json: auth.patPrefix: must match pattern "^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"'],
    ['a negative retry delay', { webhooks: { retryDelaysMs: [2000, -1] } }, 'v.json: webhooks.retryDelaysMs[1]: must be >= 0'],
    ['no transports', { transports: [] }, 'v.json: transports: must NOT have fewer than 1 items'],
    ['an unknown transport type', { transports: [{ name: 'x', type: 'http' }] }, 'v.json: transports[0].type: must be one of "simulator", "smpp", "modem"'],
    ['a transport without a name', { transports: [{ type: 'simulator' }] }, 'v.json: transports[0].name: is required'],
    ['an SMPP transport without host', { transports: [{ ...smpp, host: undefined }] }, 'v.json: transports[0].host: is required'],
    ['an SMPP key of another type', { transports: [{ ...smpp, devices: [] }] }, 'v.json: transports[0].devices: unknown key "devices" at /transports/0'],
    ['an SMPP bad bind mode', { transports: [{ ...smpp, bindMode: 'receiver' }] }, 'v.json: transports[0].bindMode: must be one of "transceiver", "transmitter-receiver"'],
    ['an SMPP bad data coding', { transports: [{ ...smpp, dataCoding: { gsm7: 8 } }] }, 'v.json: transports[0].dataCoding.gsm7: must be one of 0, 1, 3'],
    ['an SMPP system_id past 64 characters', { transports: [{ ...smpp, systemId: 'a'.repeat(65) }] }, 'v.json: transports[0].systemId: must NOT have more than 64 characters'],
    ['a modem without devices', { transports: [{ name: 'm', type: 'modem', devices: [] }] }, 'v.json: transports[0].devices: must NOT have fewer than 1 items'],
    ['a modem device key unknown', { transports: [{ name: 'm', type: 'modem', devices: [{ path: '/dev/ttyUSB0', speed: 1 }] }] }, 'v.json: transports[0].devices[0].speed: unknown key "speed" at /transports/0/devices/0'],
    ['a simulator outcome of an unknown kind', { transports: [{ name: 's', type: 'simulator', outcomes: [{ suffix: '9', status: 'X', kind: 'maybe' }] }] }, 'v.json: transports[0].outcomes[0].kind: must be one of "receipt", "reject", "temporary"'],
    ['a modem PIN that is not 4-8 digits', { transports: [{ name: 'm', type: 'modem', devices: [{ path: '/dev/ttyUSB0', pin: '12' }] }] }, 'v.json: transports[0].devices[0].pin: must match pattern "^[0-9]{4,8}$"'],
    ['a simulator outcome without status', { transports: [{ name: 's', type: 'simulator', outcomes: [{ suffix: '9' }] }] }, 'v.json: transports[0].outcomes[0].status: is required'],
    ['a second transport with the same name', { transports: [{ name: 's', type: 'simulator' }, { ...smpp, name: 's' }] }, 'v.json: transports[1].name: duplicate transport name "s"'],
    ['a route to an unknown transport', { routes: [{ prefix: '353', transport: 'carrier' }] }, 'v.json: routes[0].transport: no transport named "carrier" (configured: sim)'],
    ['a route prefix that is not digits', { routes: [{ prefix: '+353', transport: 'sim' }] }, 'v.json: routes[0].prefix: must match pattern "^[0-9]{0,20}$"'],
    ['a duplicate route prefix', { routes: [{ prefix: '', transport: 'sim' }, { prefix: '', transport: 'sim' }] }, 'v.json: routes[1].prefix: duplicate route prefix ""'],
    ['a config that is not an object', [1, 2], 'v.json: (top level): must be object'],
  ];
  it.each(cases)('%s', (_name, object, message) => {
    expect(rejection(() => resolveConfigFromObject(object, 'v.json', {}))).toBe(message);
  });

  it('accepts the architecture example with SMPP, modem and routes', () => {
    const config = resolveConfigFromObject({
      transports: [
        { name: 'sim', type: 'simulator', outcomes: [{ suffix: '9', status: 'UNDELIV' }] },
        { ...smpp, password: '${SMPP_PASSWORD}', bindMode: 'transceiver', window: 10, maxPerSecond: 100, validityPeriod: '000001000000000R' },
        { name: 'modems', type: 'modem', devices: [{ path: '/dev/ttyUSB0', profile: 'generic' }] },
      ],
      routes: [{ prefix: '353', transport: 'carrier' }, { prefix: '', transport: 'sim' }],
    }, 'arch.json', { SMPP_PASSWORD: 'pw' });
    expect(config.transports.map((t) => t.type)).toEqual(['simulator', 'smpp', 'modem']);
    expect(config.routes).toHaveLength(2);
  });

  it('accepts every field the transports define (simulator outcome kinds, SMPP TLS and drain, modem tuning)', () => {
    const config = resolveConfigFromObject({
      transports: [
        { name: 'sim', type: 'simulator', maxPerSecond: 50, outcomes: [{ suffix: '7', status: 'ESME_RTHROTTLED', kind: 'temporary', failures: 1 }] },
        { ...smpp, tls: true, tlsRejectUnauthorized: false, reconnect: { initialDelayMs: 500, maxDelayMs: 5000, authFailureDelayMs: 30000 }, drainTimeoutMs: 100, dataCoding: { gsm7: 3 }, concatenation: 'sar' },
        {
          name: 'modems', type: 'modem', devices: [{ path: '/dev/ttyUSB0', name: 'm0', profile: 'quectel-ec25', pin: '${SIM_PIN}' }],
          registrationTimeoutMs: 1000, healthIntervalMs: 1000, reopenBackoffMs: [100, 200], maxAttemptsPerPart: 2, retryDelayMs: 0, validityMinutes: 1440,
        },
      ],
    }, 'all.json', { SIM_PIN: '1234' });
    expect(config.transports[2]).toMatchObject({ devices: [{ pin: '1234' }] });
  });

  it('fills the SMPP bind mode with transceiver when omitted', () => {
    expect(resolveConfigFromObject({ transports: [smpp] }, 'b.json', {}).transports[0]).toMatchObject({ bindMode: 'transceiver' });
  });

  it('routes everything to the first transport when routes are omitted', () => {
    const config = resolveConfigFromObject({ transports: [smpp] }, 'r.json', {});
    expect(config.routes).toEqual([{ prefix: '', transport: 'carrier' }]);
  });
});

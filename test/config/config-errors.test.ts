/**
 * What the loader tells an operator about a config file it refuses, and how it reads one it takes:
 * JSON syntax errors by file, line and column; an unknown key with the nearest known one; a modem
 * profile that does not exist, by key path with the known profiles; relative paths against the
 * file's own directory; the search order when no --config is given; and admin commands, which
 * need no `${ENV}` variable of a transport entry, while serve (the default purpose) needs them all.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configPathFrom } from '../../src/config/index.js';
import { describeJsonSyntaxError } from '../../src/config/json-text.js';
import { nearestKey } from '../../src/config/suggest.js';
import { isGatewayError } from '../../src/common/errors.js';
import { loadConfig, resolveConfigFromObject } from '../../src/gateway/config.js';

const dir = mkdtempSync(join(tmpdir(), 'smsgate-config-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = join(dir, name);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, text);
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

describe('JSON syntax errors', () => {
  it('name the file, the line and the column', () => {
    const trailingComma = write('comma.json', '{\n  "api": { "port": 8080 },\n}\n');
    expect(rejection(() => loadConfig(trailingComma, {}))).toBe(`${trailingComma}: not valid JSON: line 3, column 1: Expected double-quoted property name in JSON`);
    const missingComma = write('missing.json', '{\n  "api": { "port": 8080 }\n  "auth": {}\n}');
    expect(rejection(() => loadConfig(missingComma, {}))).toBe(`${missingComma}: not valid JSON: line 3, column 3: Expected ',' or '}' after property value in JSON`);
    const cut = write('cut.json', '{\n  "api": ');
    expect(rejection(() => loadConfig(cut, {}))).toBe(`${cut}: not valid JSON: line 2, column 10: Unexpected end of JSON input`);
  });

  it('count columns from 1 on the offending line', () => {
    expect(describeJsonSyntaxError('{"a":1,}', new SyntaxError('Expected double-quoted property name in JSON at position 7'))).toBe(
      'line 1, column 8: Expected double-quoted property name in JSON',
    );
    // Node 22 appends its own "(line L column C)": it is replaced, not repeated.
    expect(describeJsonSyntaxError('{\n}x', new SyntaxError('Unexpected non-whitespace character after JSON at position 3 (line 2 column 2)'))).toBe(
      'line 2, column 2: Unexpected non-whitespace character after JSON',
    );
  });
});

describe('unknown keys', () => {
  it('suggest the nearest known key, with the JSON pointer of the object holding it', () => {
    expect(rejection(() => resolveConfigFromObject({ tranports: [] }, 'c.json', {}))).toBe('c.json: tranports: unknown key "tranports" at /: did you mean "transports"?');
    expect(rejection(() => resolveConfigFromObject({ api: { prot: 1 } }, 'c.json', {}))).toBe('c.json: api.prot: unknown key "prot" at /api: did you mean "port"?');
    expect(rejection(() => resolveConfigFromObject({ transports: [{ name: 's', type: 'smpp', host: 'h', port: 1, systemId: 'e', password: 'p', pasword: 'p' }] }, 'c.json', {})))
      .toBe('c.json: transports[0].pasword: unknown key "pasword" at /transports/0: did you mean "password"?');
  });

  it('suggest nothing for a key unlike every known one', () => {
    expect(rejection(() => resolveConfigFromObject({ frobnicate: 1 }, 'c.json', {}))).toBe('c.json: frobnicate: unknown key "frobnicate" at /');
    expect(nearestKey('zzz', ['api', 'auth'])).toBeUndefined();
    expect(nearestKey('Databse', ['database', 'api'])).toBe('database');
  });
});

describe('modem profiles', () => {
  const modem = (profile: string) => ({ name: 'm', type: 'modem', devices: [{ path: '/dev/ttyUSB0' }, { path: '/dev/ttyUSB1', profile }] });

  it('an unknown profile names its key path and the known profiles', () => {
    const transports = [{ name: 'sim', type: 'simulator' }, { name: 'sim2', type: 'simulator' }, modem('quectel-ec2')];
    expect(rejection(() => resolveConfigFromObject({ transports }, 'c.json', {}))).toBe(
      'c.json: transports[2].devices[1].profile: unknown modem profile "quectel-ec2" (known: generic, huawei-e3372, quectel-ec25, sim7600, sim800)',
    );
  });

  it('a known profile loads', () => {
    expect(resolveConfigFromObject({ transports: [modem('sim800')] }, 'c.json', {}).transports[0]).toMatchObject({ type: 'modem' });
  });
});

describe('relative paths', () => {
  it('resolve against the config file directory, not the working directory', () => {
    const file = write('site/etc/smsgate.json', JSON.stringify({
      database: { path: 'data/gw.sqlite' },
      logging: { file: '../log/smsgate.log' },
      transports: [{ name: 'm', type: 'modem', profilesDir: '../../../test/fixtures-none', devices: [{ path: '/dev/ttyUSB0', profile: 'generic' }] }],
    }));
    // profilesDir relative to site/etc/ has no profiles: the error shows where it looked.
    expect(rejection(() => loadConfig(file, {}))).toBe(
      `${file}: transports[0].devices[0].profile: unknown modem profile "generic" in ${join(dir, '..', 'test', 'fixtures-none')} (known: none)`,
    );
    const ok = write('site/etc/ok.json', JSON.stringify({ database: { path: 'data/gw.sqlite' }, logging: { file: '../log/smsgate.log' } }));
    const config = loadConfig(ok, {});
    expect(config.database.path).toBe(join(dir, 'site', 'etc', 'data', 'gw.sqlite'));
    expect(config.database.keyFile).toBe(join(dir, 'site', 'etc', 'data', 'gw.key'));
    expect(config.logging.file).toBe(join(dir, 'site', 'log', 'smsgate.log'));
  });

  it('absolute paths and :memory: stay as written; an object without a file keeps relative ones', () => {
    const file = write('abs.json', JSON.stringify({ database: { path: ':memory:', keyFile: '/etc/smsgate/k' } }));
    expect(loadConfig(file, {}).database).toMatchObject({ path: ':memory:', keyFile: '/etc/smsgate/k' });
    expect(resolveConfigFromObject({ database: { path: 'data/x.sqlite' } }, 'c.json', {}).database.path).toBe('data/x.sqlite');
  });
});

describe('the search order', () => {
  const none = { exists: () => false };

  it('--config, then SMSGATE_CONFIG, then ./smsgate.json, then /etc/smsgate/smsgate.json, then the checkout default', () => {
    expect(configPathFrom('a.json', { SMSGATE_CONFIG: 'b.json' }, { exists: () => true })).toBe('a.json');
    expect(configPathFrom(undefined, { SMSGATE_CONFIG: 'b.json' }, { exists: () => true })).toBe('b.json');
    expect(configPathFrom(undefined, {}, { exists: () => true })).toBe('smsgate.json');
    expect(configPathFrom(undefined, {}, { exists: (f) => f === '/etc/smsgate/smsgate.json' })).toBe('/etc/smsgate/smsgate.json');
    expect(configPathFrom(undefined, {}, { ...none, sourceCheckoutDefault: () => 'config/default.json' })).toBe('config/default.json');
  });

  it('with none found, names the four places and smsgate init', () => {
    const message = rejection(() => configPathFrom(undefined, {}, none));
    expect(message).toBe(
      'no config file found: give --config FILE, set SMSGATE_CONFIG, or put one at ./smsgate.json or /etc/smsgate/smsgate.json; `smsgate init` writes a starter ./smsgate.json',
    );
  });
});

describe('${ENV} variables by purpose', () => {
  const file = write('secrets.json', JSON.stringify({
    database: { path: 'data/gw.sqlite' },
    transports: [
      { name: 'carrier', type: 'smpp', host: 'smsc', port: 2775, systemId: 'esme', password: '${SMPP_PASSWORD}' },
      { name: 'modems', type: 'modem', devices: [{ path: '/dev/ttyUSB0', pin: '${MODEM_PIN}' }] },
    ],
  }));

  it('serve needs every variable, naming the key', () => {
    expect(rejection(() => loadConfig(file, {}))).toBe(`${file}: transports[0].password: environment variable SMPP_PASSWORD is not set`);
    expect(rejection(() => loadConfig(file, {}, { purpose: 'serve' }))).toBe(`${file}: transports[0].password: environment variable SMPP_PASSWORD is not set`);
  });

  it('admin commands load without the transports variables, and still check the sections they use', () => {
    const config = loadConfig(file, {}, { purpose: 'admin' });
    expect(config.transports.map((t) => t.name)).toEqual(['carrier', 'modems']);
    expect(config.database.path).toBe(join(dir, 'data', 'gw.sqlite'));
    // A set variable is still filled in; a database variable is still required.
    expect(loadConfig(file, { SMPP_PASSWORD: 's3cret', MODEM_PIN: '1234' }, { purpose: 'admin' }).transports[0]).toMatchObject({ password: 's3cret' });
    const database = write('db-secret.json', JSON.stringify({ database: { url: 'postgresql://gw:${PGPASS}@db/smsgate' } }));
    expect(rejection(() => loadConfig(database, {}, { purpose: 'admin' }))).toBe(`${database}: database.url: environment variable PGPASS is not set`);
  });

  it('a transport entry whose variables are all set is still checked in full for admin commands', () => {
    const bad = write('bad-pin.json', JSON.stringify({ transports: [{ name: 'modems', type: 'modem', devices: [{ path: '/dev/ttyUSB0', pin: '${MODEM_PIN}' }] }] }));
    expect(rejection(() => loadConfig(bad, { MODEM_PIN: '12' }, { purpose: 'admin' }))).toBe(`${bad}: transports[0].devices[0].pin: must match pattern "^[0-9]{4,8}$"`);
  });
});

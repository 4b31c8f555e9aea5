/**
 * `smsgate config check` and route client names: a name no client has is a warning (the route
 * applies to nobody until that client exists), read from the SQLite database the config names,
 * opened read-only; without a database there is nothing to check against and nothing is created.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run as configCommand } from '../../src/cli/commands/config.js';
import { openStore } from '../../src/store/sqlite/database.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';
import { captureCliOutput } from '../support/cli-output.js';

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function writeConfig(databasePath: string): string {
  const file = join(dir!, 'routes.json');
  writeFileSync(file, JSON.stringify({
    database: { path: databasePath },
    api: { port: 0 },
    transports: [{ name: 'carrierA', type: 'simulator' }, { name: 'modems', type: 'simulator' }],
    routes: [
      { prefix: '353', clients: ['acme', 'globex'], transports: ['carrierA', 'modems'], strategy: 'failover' },
      { prefix: '', transport: 'carrierA' },
    ],
  }));
  return file;
}

describe('config check with client-specific routes', () => {
  it('warns about a route client name no client in the database has, and stays valid', async () => {
    dir = mkdtempSync(join(tmpdir(), 'smsgate-route-clients-'));
    const databasePath = join(dir, 'smsgate.sqlite');
    const store = await openStore({ path: databasePath });
    await sqliteStorePorts(store).auth.insertClient({ name: 'acme', webhookUrl: null, webhookSecretEnc: null }, Date.now());
    await store.close();
    const file = writeConfig(databasePath);

    const text = await captureCliOutput(() => configCommand(['check', '--config', file]));
    expect(text.code).toBe(0);
    expect(text.stderr).toBe(`${file}: warning: routes[0].clients[1]: no client named "globex" in the database (the route applies to nobody until one is created)\n`);
    const json = await captureCliOutput(() => configCommand(['check', '--config', file, '--json']));
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: true, warnings: ['routes[0].clients[1]: no client named "globex" in the database (the route applies to nobody until one is created)'] });
  });

  it('checks nothing, and creates no database, when the file does not exist yet', async () => {
    dir = mkdtempSync(join(tmpdir(), 'smsgate-route-clients-'));
    const databasePath = join(dir, 'smsgate.sqlite');
    const result = await captureCliOutput(() => configCommand(['check', '--config', writeConfig(databasePath)]));
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(existsSync(databasePath)).toBe(false);
  });
});

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/gateway/config.js';

const configDir = join(import.meta.dirname, '..', '..', 'config');

describe('shipped config files', () => {
  // smsgate.schema.json is the schema of these files, not one of them (test/config/published-schema.test.ts).
  const files = readdirSync(configDir).filter((f) => f.endsWith('.json') && f !== 'smsgate.schema.json');

  it('ships the embedded default and an example for an SMPP carrier and for modems', () => {
    expect(files).toEqual(expect.arrayContaining(['default.json', 'smpp-carrier.example.json', 'modems.example.json']));
  });

  it.each(files)('%s validates, with ${ENV} references filled from the environment', (file) => {
    const config = loadConfig(join(configDir, file), { SMPP_PASSWORD: 'secret', MODEM1_PIN: '1234', SMSGATE_DB_PASSWORD: 'pw' });
    expect(config.transports.length).toBeGreaterThan(0);
    for (const route of config.routes) {
      expect(config.transports.map((t) => t.name)).toContain(route.transport);
    }
  });

  // README "Running in production" installs an example as /etc/smsgate/smsgate.json and scrapes the
  // admin listener on 127.0.0.1:8081; without an admin section it is off.
  it.each(['smpp-carrier.example.json', 'modems.example.json'])('%s enables the admin listener on loopback port 8081', (file) => {
    const config = loadConfig(join(configDir, file), { SMPP_PASSWORD: 'secret', MODEM1_PIN: '1234', SMSGATE_DB_PASSWORD: 'pw' });
    expect(config.admin).toMatchObject({ host: '127.0.0.1', port: 8081 });
  });
});

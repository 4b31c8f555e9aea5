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
  it('smpp-server.example.json runs the SMPP server for customers beside a carrier bind on the usual 2775', () => {
    const config = loadConfig(join(configDir, 'smpp-server.example.json'), { SMPP_PASSWORD: 'secret' });
    expect(config.smppServer).toEqual({ host: '0.0.0.0', port: 2776, windowSize: 100, enquireLinkIntervalMs: 30_000, responseTimeoutMs: 10_000, receiptRetentionHours: 72 });
    expect(config.transports.find((t) => t.name === 'carrier')).toMatchObject({ type: 'smpp', port: 2775 });
  });

  it.each(['smpp-carrier.example.json', 'modems.example.json'])('%s enables the admin listener on loopback port 8081', (file) => {
    const config = loadConfig(join(configDir, file), { SMPP_PASSWORD: 'secret', MODEM1_PIN: '1234', SMSGATE_DB_PASSWORD: 'pw' });
    expect(config.admin).toMatchObject({ host: '127.0.0.1', port: 8081 });
  });
});

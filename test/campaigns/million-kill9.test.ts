/**
 * kill -9 right after the 202 of a request stored in many slices (each committed without an fsync
 * of its own, the campaign row with one): the real `smsgate serve` restarted on the same file
 * processes the campaign with every recipient exactly once, in request order.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayProcess, seedAccount, writeGatewayConfig } from '../support/gateway-process.js';
import { pollUntil } from '../support/poll-until.js';

let gateway: GatewayProcess | undefined;
let dir: string | undefined;
afterEach(async () => {
  gateway?.kill('SIGKILL');
  await gateway?.waitForExit();
  gateway = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('kill -9 right after the 202 of a request stored in slices', () => {
  it('processes the campaign after a restart with every recipient exactly once, in order', async () => {
    dir = mkdtempSync(join(tmpdir(), 'smsgate-million-kill9-'));
    const dbPath = join(dir, 'smsgate.sqlite');
    const { path: configPath, config } = writeGatewayConfig(dir, {
      database: { path: dbPath, synchronous: 'FULL' },
      api: { host: '127.0.0.1', port: 0 },
      logging: { level: 'info' },
    });
    const { token } = await seedAccount(config, { senders: [{ name: 'Acme', type: 0 }] });
    const total = 30_000;
    const recipientInfo = Array.from({ length: total }, (_, i) => ({ msisdn: `4477${String(i).padStart(8, '0')}`, ClientReference: `r${i}` }));
    gateway = await GatewayProcess.spawn(configPath);
    const response = await fetch(`${gateway.baseUrl}/v1/campaign`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hi', from: 'Acme', recipientInfo }),
    });
    expect(response.status).toBe(202);
    gateway.kill('SIGKILL');
    await gateway.waitForExit();
    const { id } = (await response.json()) as { id: string };

    const db = new Database(dbPath, { readonly: true });
    try {
      // More than one slice: the campaign row's commit is the one that made them durable.
      expect((db.prepare('SELECT COUNT(*) AS n FROM campaign_request_chunks WHERE campaign_id = ?').get(id) as { n: number }).n).toBeGreaterThan(10);
    } finally {
      db.close();
    }

    gateway = await GatewayProcess.spawn(configPath);
    const restarted = gateway;
    await pollUntil(async () => (await fetch(`${restarted.baseUrl}/v1/campaign/${id}`, { headers: { authorization: `Bearer ${token}` } })).status === 200,
      60_000, () => `campaign ${id} ready after the restart`, 100);
    const after = new Database(dbPath, { readonly: true });
    try {
      const rows = after.prepare('SELECT msisdn, client_reference FROM recipients WHERE campaign_id = ? ORDER BY id').all(id) as Array<{ msisdn: string; client_reference: string }>;
      expect(rows).toHaveLength(total);
      expect(rows.every((row, i) => row.msisdn === recipientInfo[i]!.msisdn && row.client_reference === `r${i}`)).toBe(true);
      expect(after.prepare('SELECT total_sent FROM campaigns WHERE id = ?').get(id)).toEqual({ total_sent: total });
    } finally {
      after.close();
    }
  }, 120_000);
});

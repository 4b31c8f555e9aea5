/**
 * A 202 is kept through kill -9 even in the middle of processing: the real `smsgate serve` is
 * killed while a 100,000-recipient campaign is half written (some chunks committed, state still
 * 'processing'); after a restart the campaign is redone from the start and ends with every
 * recipient exactly once. The database is only read here, from a second connection.
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getWithToken, postJson, SpecServer, type SpecAccount, type Summary } from './spec-server.js';

let server: SpecServer;
let acme: SpecAccount;

beforeAll(async () => {
  server = await SpecServer.start();
  acme = await server.createAccount('acme', { senders: [{ name: 'Acme', type: 0 }] });
}, 180_000);
afterAll(async () => server?.stop());

describe('kill -9 while a campaign is being processed', () => {
  it('redoes the half-written campaign after a restart: every recipient exactly once, then a summary', async () => {
    const total = 100_000;
    const recipientInfo = Array.from({ length: total }, (_, i) => ({ msisdn: `4479${String(i).padStart(8, '0')}` }));
    // Scheduled far ahead so the engine leaves the recipients alone; only processing is under test.
    const res = await postJson(server.url('/v1/campaign'), acme.token, { text: 'Crash', from: 'Acme', sendAt: '2099-01-01T00:00', recipientInfo });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };

    const db = new Database(`${server.dir}/smsgate.sqlite`, { readonly: true, fileMustExist: true });
    try {
      const progress = db.prepare(
        'SELECT c.state AS state, (SELECT COUNT(*) FROM recipients r WHERE r.campaign_id = c.id) AS written FROM campaigns c WHERE c.id = ?',
      );
      const read = (): { state: string; written: number } => progress.get(id) as { state: string; written: number };
      await eventually(async () => {
        const now = read();
        if (now.state !== 'processing' && now.state !== 'queued') throw new Error(`campaign became ${now.state} before it could be caught half written`);
        return now.written > 0 ? now : undefined;
      }, 'the first chunk of recipients', 60_000);
      await server.kill('SIGKILL');
      const halfWritten = read();
      expect(halfWritten.state).toBe('processing');
      expect(halfWritten.written).toBeGreaterThan(0);
      expect(halfWritten.written).toBeLessThan(total);

      await server.restart();
      const summary = await eventually(async () => {
        const s = await getWithToken(server.url(`/v1/campaign/${id}`), acme.token);
        return s.status === 200 ? ((await s.json()) as Summary) : undefined;
      }, 'the redone campaign to be ready', 60_000);
      expect(summary).toEqual({ totalSent: total, delivered: 0, undelivered: 0, pending: total });
      const counts = db.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT msisdn) AS distinctMsisdns FROM recipients WHERE campaign_id = ?').get(id);
      expect(counts).toEqual({ n: total, distinctMsisdns: total });
    } finally {
      db.close();
    }
  }, 150_000);
});

/**
 * A real `smsgate serve` child on a real throwaway PostgreSQL (database.url), with the
 * SMPP test SMSC and a real HTTP receiver: a campaign goes through to signed webhooks; `kill -9` in
 * the middle and a restart lose nothing. The restarted process is a new node: it finds the killed
 * node's row, and once that lease has run out its beat takes the killed node's in-flight parts
 * over; the SMSC offers its unacknowledged receipts again on the new bind.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { expectFinalWebhooks, getSummary, postCampaign, until } from './e2e-setup.js';
import { usePgServePeers } from './pg-serve-setup.js';

const RECIPIENTS = 4_000;
const WINDOW = 10;
const SECRET = 'pg-crash-test-secret';
const statusFor = (msisdn: string): string => (msisdn.endsWith('9') ? 'UNDELIV' : 'DELIVRD');

const peers = usePgServePeers('serve-pg', {
  webhookSecret: SECRET,
  startSmsc: () => ReceiptingSmsc.start({ statusFor }),
  transport: { window: WINDOW, maxPerSecond: 5_000 },
});

async function query<Row extends pg.QueryResultRow>(sql: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: peers().url });
  await client.connect();
  try {
    return (await client.query<Row>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('smsgate serve on PostgreSQL (database.url)', () => {
  it('sends a campaign through to webhooks, and loses nothing across kill -9 and a restart', async () => {
    const msisdns = Array.from({ length: RECIPIENTS }, (_, i) => `35386${String(i).padStart(7, '0')}`);
    const { smsc, receiver, token } = peers();
    const first = await peers().spawn();
    expect(await query('SELECT count(*)::int AS n FROM cluster_nodes')).toEqual([{ n: 1 }]);
    const { status, id } = await postCampaign(first.baseUrl, token, {
      text: 'Flash sale today only',
      from: 'Shop',
      recipientInfo: msisdns.map((msisdn, i) => ({ msisdn, ClientReference: `c${i}` })),
    });
    expect(status).toBe(202);

    await until(() => smsc.submitCount, (n) => n >= RECIPIENTS / 4, 120_000, 'a quarter of the submits');
    first.kill('SIGKILL');
    expect((await first.waitForExit()).signal).toBe('SIGKILL');
    expect(smsc.submitCount).toBeLessThan(RECIPIENTS);

    // The restart is a new node; the killed one's row stays until its lease runs out and is reaped.
    const second = await peers().spawn();
    const summary = await until(() => getSummary(second.baseUrl, token, id), (s) => s !== undefined && s.pending === 0, 240_000, 'every recipient final');
    const undeliverable = msisdns.filter((m) => statusFor(m) === 'UNDELIV').length;
    expect(summary).toEqual({ totalSent: RECIPIENTS, delivered: RECIPIENTS - undeliverable, undelivered: undeliverable, pending: 0 });
    expect(second.logLines.some((line) => line.includes('took over from nodes whose lease ran out'))).toBe(true);

    // Every recipient reached the SMSC; re-sent ones are bounded by binds (1) x window in flight at the kill.
    expect(smsc.submitsByDestination.size).toBe(RECIPIENTS);
    const duplicates = [...smsc.submitsByDestination.values()].reduce((sum, n) => sum + n - 1, 0);
    expect(duplicates).toBeLessThanOrEqual(WINDOW);

    // Every recipient's final receipt reached the receiver, signed (at-least-once: a duplicate may come too).
    await expectFinalWebhooks(receiver, msisdns, { from: 'Shop', statusFor, timeoutMs: 120_000 });

    // A clean SIGTERM exits 0 and the node leaves the cluster (its row deleted, not left to expire).
    expect(await second.stop()).toBe(0);
    expect(await query('SELECT count(*)::int AS n FROM cluster_nodes')).toEqual([{ n: 0 }]);
    expect(await query(`SELECT state, count(*)::int AS n FROM message_parts GROUP BY state ORDER BY state`)).toEqual([
      { state: 'delivered', n: RECIPIENTS - undeliverable },
      { state: 'undelivered', n: undeliverable },
    ]);
    expect(await query(`SELECT count(*)::int AS n FROM message_parts WHERE claimed_by IS NOT NULL AND state = 'submitting'`)).toEqual([{ n: 0 }]);
    expect(await query(`SELECT count(*)::int AS n FROM recipients WHERE dispatch_state <> 'dispatched'`)).toEqual([{ n: 0 }]);
  }, 600_000);
});

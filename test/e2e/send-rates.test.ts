/**
 * A client's send rate end to end: campaigns posted over HTTP to a running gateway (SQLite), sent
 * over real SMPP to the test SMSC, and the rate measured at the SMSC's receive times. A client
 * capped at 50 parts a second and an unlimited one share one fast transport: the capped client's
 * parts arrive at most at 50 a second (plus its one-second burst) while the other's campaign
 * finishes far ahead of it; a rate lowered, then removed, in the database of the running gateway
 * (as `smsgate client set-rate` does) takes effect within 5 s, with no restart.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, resolveConfigFromObject, type SmsGateConfig } from '../../src/index.js';
import { seedAccount, type SeededAccount } from '../support/gateway-process.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { mostWithin, rateBound } from '../support/send-rate-measure.js';
import { baseUrlOf, gatewayConfig, getSummary, postCampaign, tempDir, until } from './e2e-setup.js';

const RATE = 50;

let dir: string;
let smsc: ReceiptingSmsc;
/** Every submit the SMSC accepted: its destination and when. */
const received: { destination: string; atMs: number }[] = [];
let config: SmsGateConfig;
let capped: SeededAccount;
let open: SeededAccount;
let stopGateway: (() => Promise<void>) | undefined;

beforeAll(async () => {
  dir = tempDir('send-rates');
  smsc = await ReceiptingSmsc.start({ onSubmitted: (destination) => received.push({ destination, atMs: Date.now() }) });
  config = resolveConfigFromObject(gatewayConfig(dir, smsc.address, { window: 50, maxPerSecond: 10_000 }), join(dir, 'smsgate.json'));
  capped = await seedAccount(config, { clientName: 'capped', senders: [{ name: 'Capped', type: 0 }] });
  open = await seedAccount(config, { clientName: 'open', senders: [{ name: 'Open', type: 0 }] });
}, 60_000);

afterEach(async () => {
  await stopGateway?.();
  stopGateway = undefined;
});

afterAll(async () => {
  await smsc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A write to the running gateway's database through a second connection, as the CLI makes it. */
function write(sql: string, ...params: unknown[]): void {
  const db = new Database(config.database.path);
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

function setRate(clientName: string, partsPerSecond: number): void {
  write(`INSERT INTO client_send_rates (client_id, parts_per_second, next_part_at_us, updated_at) SELECT id, ?, 0, ? FROM clients WHERE name = ?
    ON CONFLICT (client_id) DO UPDATE SET parts_per_second = excluded.parts_per_second, updated_at = excluded.updated_at`, partsPerSecond, Date.now(), clientName);
}

function receivedAt(prefix: string): number[] {
  return received.filter((r) => r.destination.startsWith(prefix)).map((r) => r.atMs);
}

const recipients = (count: number, prefix: string): { msisdn: string }[] =>
  Array.from({ length: count }, (_, i) => ({ msisdn: `${prefix}${String(i).padStart(7, '0')}` }));

async function startGateway(): Promise<string> {
  const gateway = await createGateway(config);
  await gateway.start();
  stopGateway = () => gateway.stop();
  return baseUrlOf(gateway);
}

describe('per-client send rate, end to end', () => {
  it('sends the capped client\'s parts at most at 50 a second while the unlimited client\'s campaign on the same transport finishes far ahead', async () => {
    setRate('capped', RATE);
    const baseUrl = await startGateway();
    const slow = await postCampaign(baseUrl, capped.token, { text: 'Capped offer', from: 'Capped', recipientInfo: recipients(300, '35386') });
    const fast = await postCampaign(baseUrl, open.token, { text: 'Open offer', from: 'Open', recipientInfo: recipients(300, '35387') });
    expect([slow.status, fast.status]).toEqual([202, 202]);
    await until(() => getSummary(baseUrl, open.token, fast.id), (s) => s?.pending === 0, 60_000, 'the unlimited campaign delivered');
    await until(() => getSummary(baseUrl, capped.token, slow.id), (s) => s?.pending === 0, 60_000, 'the capped campaign delivered');

    const slowTimes = receivedAt('35386');
    const fastTimes = receivedAt('35387');
    expect(slowTimes).toHaveLength(300);
    expect(fastTimes).toHaveLength(300);
    const figures = {
      within2s: mostWithin(slowTimes, 2_000), within4s: mostWithin(slowTimes, 4_000), cappedSpanMs: slowTimes.at(-1)! - slowTimes[0]!,
      openSpanMs: fastTimes.at(-1)! - fastTimes[0]!,
    };
    console.log(`capped at ${RATE}/s: ${JSON.stringify(figures)} (bounds ${rateBound(RATE, 2_000)}, ${rateBound(RATE, 4_000)})`);
    expect(figures.within2s).toBeLessThanOrEqual(rateBound(RATE, 2_000));
    expect(figures.within4s).toBeLessThanOrEqual(rateBound(RATE, 4_000));
    // 300 parts at 50 a second after a burst of 50: 5 s at least.
    expect(figures.cappedSpanMs).toBeGreaterThanOrEqual(4_500);
    // The unlimited client's 300 were all in before the capped client's 200th part (3 s into its run at the earliest).
    expect(fastTimes.at(-1)!).toBeLessThan(slowTimes[199]!);
  }, 120_000);

  it('applies a rate lowered, then removed, while the gateway runs, within 5 s each', async () => {
    received.length = 0;
    setRate('capped', RATE);
    const baseUrl = await startGateway();
    const posted = await postCampaign(baseUrl, capped.token, { text: 'Capped again', from: 'Capped', recipientInfo: recipients(800, '35388') });
    expect(posted.status).toBe(202);
    await until(() => receivedAt('35388').length, (n) => n >= 100, 60_000, 'the campaign under way at 50 a second');

    setRate('capped', 10);
    const loweredMs = Date.now();
    const atLowering = receivedAt('35388').length;
    // At 10 a second, 80 more take about 8 s (what was claimed already goes out first).
    await until(() => receivedAt('35388').length, (n) => n >= atLowering + 80, 60_000, '80 more parts after the rate was lowered');
    const fromFiveSeconds = receivedAt('35388').filter((t) => t >= loweredMs + 5_000);
    expect(fromFiveSeconds.length).toBeGreaterThan(0);
    // From 5 s after the change on, 10 a second (at 50 a second, 100 would come in 2 s).
    expect(mostWithin(fromFiveSeconds, 2_000)).toBeLessThanOrEqual(rateBound(10, 2_000));

    write('DELETE FROM client_send_rates WHERE client_id = (SELECT id FROM clients WHERE name = ?)', 'capped');
    const removedMs = Date.now();
    const left = 800 - receivedAt('35388').length;
    // Unlimited again: the rest (over 500, nearly a minute at 10 a second) arrives within 5 s.
    expect(left).toBeGreaterThan(500);
    await until(() => receivedAt('35388').length, (n) => n >= 800, 60_000, 'every part sent');
    expect(receivedAt('35388').at(-1)! - removedMs).toBeLessThanOrEqual(5_000);
    await until(() => getSummary(baseUrl, capped.token, posted.id), (s) => s?.pending === 0, 60_000, 'the campaign delivered');
  }, 120_000);
});

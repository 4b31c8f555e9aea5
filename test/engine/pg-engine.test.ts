/**
 * The dispatch engine on PostgreSQL, end to end over real SMPP on
 * loopback (TestSmsc) against a real PostgreSQL 15: single- and multi-part messages, a receipt that
 * beats its submit_sm_resp, a temporary failure retried, NO_ROUTE with its webhook row, the
 * inbound store taken from PostgreSQL, and a clean stop that requeues only this node's own parts.
 */
import { afterEach, expect, it } from 'vitest';
import { COMMAND_STATUS_CODE } from '../../src/transports/smpp/command-status.js';
import { SmppTransport } from '../../src/transports/smpp/index.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { TestSmsc, type TestSmscOptions } from '../support/smsc/test-smsc.js';
import { smppConfig } from '../transports/smpp/helpers.js';
import { allFinal, msisdns, outboxIn, partsOf, receiptsIn, recipientsOf, seedCampaign, seedClient, startPgEngine, until } from './pg-engine-harness.js';

const suite = usePostgresSuite();
const smscs: TestSmsc[] = [];

afterEach(async () => {
  for (const smsc of smscs.splice(0)) await smsc.stop();
});

async function startSmsc(options: TestSmscOptions): Promise<TestSmsc> {
  const smsc = await TestSmsc.start(options);
  smscs.push(smsc);
  return smsc;
}

/** 200 GSM-7 characters: two concatenated parts of 153. */
const TWO_PART_TEXT = 'A'.repeat(200);

function webhookStatuses(outbox: readonly { recipient_id: number | null; body: string }[]): Map<number, string[]> {
  const byRecipient = new Map<number, string[]>();
  for (const row of outbox) {
    const status = (JSON.parse(row.body) as { Status: string }).Status;
    byRecipient.set(row.recipient_id!, [...(byRecipient.get(row.recipient_id!) ?? []), status]);
  }
  return byRecipient;
}

it('sends single- and multi-part messages over SMPP and applies every receipt: recipients delivered, one webhook row each', async () => {
  const { pool } = await suite.open();
  const smsc = await startSmsc({ autoReceipt: { stat: 'DELIVRD' } });
  const { engine } = await startPgEngine(suite, { pool, transports: [new SmppTransport(smppConfig(smsc))] });
  const clientId = await seedClient(pool);
  const short = await seedCampaign(pool, { clientId, msisdns: msisdns(3) });
  const long = await seedCampaign(pool, { clientId, text: TWO_PART_TEXT, msisdns: msisdns(2, '35386') });
  engine.wake();

  const shortRecipients = await until(() => recipientsOf(pool, short), allFinal);
  const longRecipients = await until(() => recipientsOf(pool, long), allFinal);
  expect([...shortRecipients, ...longRecipients].map((r) => [r.status, r.last_status])).toEqual(Array(5).fill(['delivered', 'DELIVRD']));
  const parts = [...(await partsOf(pool, short)), ...(await partsOf(pool, long))];
  expect(parts.map((p) => [p.part_number, p.parts_total, p.state, p.attempts, p.claimed_by])).toEqual([
    ...Array(3).fill([1, 1, 'delivered', 1, null]),
    [1, 2, 'delivered', 1, null], [2, 2, 'delivered', 1, null],
    [1, 2, 'delivered', 1, null], [2, 2, 'delivered', 1, null],
  ]);
  expect(smsc.submits).toHaveLength(7);
  expect((await receiptsIn(pool)).map((r) => r.match_state)).toEqual(Array(7).fill('matched'));
  const statuses = webhookStatuses(await outboxIn(pool));
  expect([...statuses.values()]).toEqual(Array(5).fill(['DELIVRD']));
  expect(engine.stats()).toMatchObject({ outcomes: { accepted: 7, retried: 0, failed: 0 }, fencedWrites: 0, failedCommits: 0 });
  // Matched on arrival, or parked a moment and taken by the submit write of their part.
  expect(engine.stats().receiptsMatched + engine.stats().receiptsParked).toBe(7);
});

it('matches a receipt that arrives before its submit_sm_resp (parked, or in the outcome\'s transaction, then applied)', async () => {
  const { pool } = await suite.open();
  const smsc = await startSmsc({ autoReceipt: { stat: 'DELIVRD', beforeResponse: true } });
  const { engine } = await startPgEngine(suite, { pool, transports: [new SmppTransport(smppConfig(smsc))] });
  const campaignId = await seedCampaign(pool, { clientId: await seedClient(pool), text: TWO_PART_TEXT, msisdns: msisdns(4) });
  engine.wake();

  const recipients = await until(() => recipientsOf(pool, campaignId), allFinal);
  expect(recipients.map((r) => r.status)).toEqual(Array(4).fill('delivered'));
  expect((await partsOf(pool, campaignId)).map((p) => p.state)).toEqual(Array(8).fill('delivered'));
  const receipts = await receiptsIn(pool);
  expect(receipts).toHaveLength(8);
  expect(receipts.every((r) => r.match_state === 'matched' && r.part_id !== null)).toBe(true);
  // Whether parked a moment or matched in the same transaction as the submit outcome, each counted once.
  expect(engine.stats().receiptsMatched + engine.stats().receiptsParked).toBe(8);
  expect(webhookStatuses(await outboxIn(pool)).size).toBe(4);
});

it('retries a part the SMSC refuses with ESME_RSYSERR (temporary) and delivers it on the second attempt', async () => {
  const { pool } = await suite.open();
  let refused = 0;
  const smsc = await startSmsc({
    autoReceipt: { stat: 'DELIVRD' },
    onSubmit: () => (refused++ === 0 ? { kind: 'status', commandStatus: COMMAND_STATUS_CODE.ESME_RSYSERR } : { kind: 'ok' }),
  });
  const { engine } = await startPgEngine(suite, { pool, transports: [new SmppTransport(smppConfig(smsc))] });
  const campaignId = await seedCampaign(pool, { clientId: await seedClient(pool), msisdns: msisdns(1) });
  engine.wake();

  const [recipient] = await until(() => recipientsOf(pool, campaignId), allFinal);
  expect(recipient).toMatchObject({ status: 'delivered', last_status: 'DELIVRD' });
  expect(await partsOf(pool, campaignId)).toMatchObject([{ state: 'delivered', attempts: 2 }]);
  expect(smsc.submits).toHaveLength(2);
  expect(engine.stats().outcomes).toMatchObject({ accepted: 1, retried: 1 });
});

it('finishes a recipient no route matches as NO_ROUTE with its webhook row, in the materialising transaction', async () => {
  const { pool } = await suite.open();
  const smsc = await startSmsc({ autoReceipt: { stat: 'DELIVRD' } });
  const { engine } = await startPgEngine(suite, {
    pool, transports: [new SmppTransport(smppConfig(smsc))], routes: [{ prefix: '35387', transport: 'carrier' }],
  });
  const campaignId = await seedCampaign(pool, { clientId: await seedClient(pool), msisdns: ['353870000001', '447700900123'] });
  engine.wake();

  const recipients = await until(() => recipientsOf(pool, campaignId), allFinal);
  expect(recipients.map((r) => [r.msisdn, r.status, r.last_status])).toEqual([
    ['353870000001', 'delivered', 'DELIVRD'],
    ['447700900123', 'undelivered', 'NO_ROUTE'],
  ]);
  expect((await partsOf(pool, campaignId)).map((p) => [p.transport, p.state, p.last_status, p.attempts])).toEqual([
    ['carrier', 'delivered', 'DELIVRD', 1],
    [null, 'undelivered', 'NO_ROUTE', 0],
  ]);
  const statuses = webhookStatuses(await outboxIn(pool));
  expect(statuses.get(recipients[1]!.id)).toEqual(['NO_ROUTE']);
  expect(smsc.submits).toHaveLength(1);
  const [campaign] = (await pool.query<{ dispatched_at: number | null }>('SELECT dispatched_at FROM campaigns WHERE id = $1', [campaignId])).rows;
  expect(campaign!.dispatched_at).not.toBeNull();
});

it('the periodic sweep applies a parked receipt whose part has its message id by now, and expires one past the TTL', async () => {
  const { pool } = await suite.open();
  const smsc = await startSmsc({});
  const { engine } = await startPgEngine(suite, { pool, transports: [new SmppTransport(smppConfig(smsc))], engine: { unmatchedReceiptTtlMs: 600_000 } });
  const campaignId = await seedCampaign(pool, { clientId: await seedClient(pool), msisdns: msisdns(1) });
  engine.wake();
  const [part] = await until(() => partsOf(pool, campaignId), (parts) => parts.length === 1 && parts[0]!.state === 'submitted');
  // Parked while the part had no message id (e.g. by a node that stopped between the two writes),
  // and one for a message no part will ever have, received 601 s ago (the TTL is 600 s; the periodic sweep runs every 60 s).
  const nowMs = Date.now();
  await pool.query(
    `INSERT INTO receipts (transport, message_id, status, final, raw, received_at, match_state)
     VALUES ('carrier', $1, 'DELIVRD', 1, 'id:x stat:DELIVRD', $2, 'pending'), ('carrier', 'no-such-id', 'DELIVRD', 1, 'raw', $3, 'pending')`,
    [part!.message_id, nowMs, nowMs - 601_000]);

  expect(await engine.expireUnmatchedReceipts()).toBe(1);
  expect((await receiptsIn(pool)).map((r) => [r.message_id, r.match_state, r.part_id])).toEqual([
    [part!.message_id, 'matched', part!.id],
    ['no-such-id', 'expired', null],
  ]);
  expect(await recipientsOf(pool, campaignId)).toMatchObject([{ status: 'delivered', last_status: 'DELIVRD' }]);
  expect(await partsOf(pool, campaignId)).toMatchObject([{ state: 'delivered' }]);
  expect([...webhookStatuses(await outboxIn(pool)).values()]).toEqual([['DELIVRD']]);
});

it('stores a mobile-originated message that arrives over SMPP in PostgreSQL (the inbound store on this backend)', async () => {
  const { pool } = await suite.open();
  const smsc = await startSmsc({});
  await startPgEngine(suite, { pool, transports: [new SmppTransport(smppConfig(smsc))] });
  await until(async () => smsc.boundSessions().length, (n) => n === 1);
  await smsc.sendDeliverSm({ source_addr: '353871111111', destination_addr: '50123', data_coding: 0, short_message: 'hello gateway' });
  const stored = await until(
    async () => (await pool.query<{ transport: string; text: string }>('SELECT transport, text FROM inbound_messages')).rows,
    (rows) => rows.length === 1,
  );
  expect(stored).toEqual([{ transport: 'carrier', text: 'hello gateway' }]);
});

it('requeues at stop only the parts this node still holds, never another node\'s', async () => {
  const { pool } = await suite.open();
  // Submits never answered: the engine's parts stay 'submitting' until it stops.
  const smsc = await startSmsc({ onSubmit: () => ({ kind: 'never' }) });
  const started = await startPgEngine(suite, {
    pool, nodeId: 'node-a', transports: [new SmppTransport(smppConfig(smsc, { responseTimeoutMs: 60_000 }))], engine: { drainTimeoutMs: 0 },
  });
  const mine = await seedCampaign(pool, { clientId: await seedClient(pool), msisdns: msisdns(3) });
  started.engine.wake();
  await until(() => partsOf(pool, mine), (parts) => parts.length === 3 && parts.every((p) => p.state === 'submitting' && p.claimed_by === 'node-a'));
  // A live peer's claim on a part of its own (the campaign not 'ready': this engine leaves it alone).
  const theirs = await seedCampaign(pool, { clientId: await seedClient(pool), msisdns: msisdns(1, '35385'), state: 'queued' });
  await pool.query(`UPDATE recipients SET dispatch_state = 'dispatched' WHERE campaign_id = $1`, [theirs]);
  await pool.query(
    `INSERT INTO message_parts (recipient_id, campaign_id, part_number, parts_total, concat_reference, transport, state, next_attempt_at, updated_at, claimed_by)
     SELECT id, campaign_id, 1, 1, 1, 'carrier', 'submitting', 0, 0, 'node-b' FROM recipients WHERE campaign_id = $1`, [theirs]);

  await started.engine.stop();
  expect((await partsOf(pool, mine)).map((p) => [p.state, p.claimed_by, p.attempts])).toEqual(Array(3).fill(['queued', null, 0]));
  expect((await partsOf(pool, theirs)).map((p) => [p.state, p.claimed_by])).toEqual([['submitting', 'node-b']]);
});

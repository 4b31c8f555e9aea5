/**
 * smsgate's SMPP server with Perl Net::SMPP as the customer (a third-party ESME), on SQLite, to a
 * test SMSC that sends receipts when the test tells it to (SMPP 3.4; docs/behaviour/smpp-server.md):
 * - every message arrives upstream once, each part as the customer cut it (8-bit and 16-bit UDH,
 *   SAR TLVs, message_payload; data_coding 0, 3 and 8), and each receipt comes back to the customer
 *   as a deliver_sm (esm_class 0x04, id: smsgate's message id, receipted_message_id and message_state);
 * - store and forward: the customer unbinds, 50 receipts arrive meanwhile and wait in the
 *   database, it binds again and gets all 50;
 * - refusals: a wrong password or an unknown system_id (ESME_RBINDFAIL), a bind over --max-binds
 *   (ESME_RALYBND), over the client's send rate (ESME_RTHROTTLED), not enough credits (ESME_RSUBMITFAIL).
 * One gateway for the file: each check has its own client or account.
 */
import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_STATUS } from '../../src/smpp-server/contracts.js';
import { CUT_CASES, cutMessage, type EsmeSubmit } from '../support/perl-esme/customer-cut.js';
import { PerlEsme, type EsmeBindType } from '../support/perl-esme/perl-esme.js';
import { TestSmsc, type RecordedSubmit } from '../support/smsc/test-smsc.js';
import { readDatabase, tempDir, until } from './e2e-setup.js';
import { expectCutCarried, expectOneReceiptEach, seedSmppCustomers, SENDER, SmppServerGateway, type SmppAccountSeed } from './smpp-server-setup.js';

/** SMPP 3.4 §5.1.3 statuses the server answers with; the values are the protocol's, the contract names them. */
const ESME_RALYBND = SERVER_STATUS.alreadyBound;
const ESME_RBINDFAIL = SERVER_STATUS.bindFailed;
const ESME_RSUBMITFAIL = SERVER_STATUS.submitFailed;
const ESME_RTHROTTLED = SERVER_STATUS.throttled;

const CUT: SmppAccountSeed = { client: 'acme', systemId: 'cutter', password: 'cut-pw1' };
const AWAY: SmppAccountSeed = { client: 'acme', systemId: 'away', password: 'away-pw' };
const SINGLE: SmppAccountSeed = { client: 'acme', systemId: 'single', password: 'one-pw', maxBinds: 1 };
const SLOW: SmppAccountSeed = { client: 'slow', systemId: 'slow', password: 'slow-pw' };
const POOR: SmppAccountSeed = { client: 'poor', systemId: 'poor', password: 'poor-pw' };

let dir: string;
let smsc: TestSmsc;
let gateway: SmppServerGateway;
let databasePath: string;
const esmes: PerlEsme[] = [];

beforeAll(async () => {
  dir = tempDir('smpp-server-perl');
  // Receipts only when a test sends them: the test decides when the customer is away.
  smsc = await TestSmsc.start();
  ({ gateway, databasePath } = await SmppServerGateway.sqlite(dir, smsc.address));
  await seedSmppCustomers(
    gateway.configPath,
    [{ name: 'acme' }, { name: 'slow', partsPerSecond: 1 }, { name: 'poor', credits: 2 }],
    [CUT, AWAY, SINGLE, SLOW, POOR],
  );
  await gateway.start();
}, 120_000);

afterEach(async () => {
  for (const esme of esmes.splice(0)) await esme.stop();
});

afterAll(async () => {
  await gateway?.stop();
  await smsc?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function connect(bind: EsmeBindType, account: Pick<SmppAccountSeed, 'systemId' | 'password'>): Promise<PerlEsme> {
  const esme = await PerlEsme.connect(gateway.esme(bind, account));
  esmes.push(esme);
  return esme;
}

async function bind(bind: EsmeBindType, account: Pick<SmppAccountSeed, 'systemId' | 'password'>): Promise<PerlEsme> {
  const esme = await connect(bind, account);
  expect(esme.bindStatus, `${bind} bind of ${account.systemId}`).toBe(0);
  return esme;
}

/** The upstream submits to these destinations, once `count` have arrived. */
async function upstreamTo(destinations: ReadonlySet<string>, count: number, timeoutMs = 20_000): Promise<RecordedSubmit[]> {
  const of = (): RecordedSubmit[] => smsc.submits.filter((s) => destinations.has(s.wire.destination_addr));
  await until(() => of().filter((s) => s.messageId !== undefined).length, (n) => n >= count, timeoutMs, `${count} submits upstream`);
  return of();
}

/** The SMSC's receipt for each upstream submit (DELIVRD, with the TLVs); each must be acknowledged by the gateway. */
async function receiptAll(submits: readonly RecordedSubmit[]): Promise<void> {
  const statuses = await Promise.all(submits.map((s) => smsc.sendReceipt(s.messageId as string, { stat: 'DELIVRD', tlvs: true }, s.wire.destination_addr)));
  expect(statuses.every((status) => status === 0)).toBe(true);
}

function waitingReceipts(systemId: string): number {
  return readDatabase(databasePath, (db) =>
    Number((db.prepare(
      `SELECT COUNT(*) AS n FROM smpp_deliveries d JOIN smpp_accounts a ON a.id = d.account_id WHERE a.system_id = ? AND d.state = 'waiting'`,
    ).get(systemId) as { n: number }).n));
}

describe('smsgate SMPP server with a Perl Net::SMPP customer (SQLite)', () => {
  it('sends every message upstream once as the customer cut it, and every receipt comes back', async () => {
    const esme = await bind('transceiver', CUT);
    const cases = CUT_CASES;
    // One destination a message: its parts are the submits upstream to that number.
    const byDestination = new Map<string, EsmeSubmit[]>(cases.map((c, i) => {
      const destination = `44770090110${i}`;
      return [destination, cutMessage({ ...c, source: SENDER, destination, reference: 700 + i, charsPerPart: 50 })];
    }));
    const sms = [...byDestination.values()].flat();
    const resps = await esme.submitAll(sms);
    expect(resps.map((r) => r.status)).toEqual(sms.map(() => 0));
    const messageIds = new Set(resps.map((r) => r.messageId));
    expect(messageIds.size).toBe(sms.length);

    const upstream = await upstreamTo(new Set(byDestination.keys()), sms.length);
    // Once each: as many submits upstream as the customer sent, no more.
    expect(upstream).toHaveLength(sms.length);
    for (const [destination, parts] of byDestination) {
      const arrived = upstream.filter((s) => s.wire.destination_addr === destination);
      expectCutCarried(arrived, parts);
      expect(arrived.every((s) => s.wire.source_addr === SENDER)).toBe(true);
    }

    await receiptAll(upstream);
    await esme.waitUntil(() => [...messageIds].every((id) => esme.acknowledgedReceiptIds().has(id)), 20_000, 'a receipt for every message');
    expectOneReceiptEach(esme, messageIds);
  }, 60_000);

  it('keeps the 50 receipts that arrive while the customer is unbound, and delivers all 50 when it binds again', async () => {
    const COUNT = 50;
    const esme = await bind('transceiver', AWAY);
    const destinations = Array.from({ length: COUNT }, (_, i) => `4477009012${String(i).padStart(2, '0')}`);
    const resps = await esme.submitAll(destinations.flatMap((destination) => cutMessage({ text: 'Back soon', scheme: 'single', dataCoding: 0, source: SENDER, destination })));
    expect(resps.every((r) => r.status === 0)).toBe(true);
    const upstream = await upstreamTo(new Set(destinations), COUNT);
    expect(await esme.unbind()).toBe(0);

    // Away: the gateway takes every receipt from the SMSC and keeps it for the customer.
    await receiptAll(upstream);
    await until(() => waitingReceipts(AWAY.systemId), (n) => n === COUNT, 20_000, `${COUNT} receipts waiting`);
    expect(esme.receipts()).toHaveLength(0);

    const back = await bind('receiver', AWAY);
    const ids = new Set(resps.map((r) => r.messageId));
    await back.waitUntil(() => back.acknowledgedReceiptIds().size >= COUNT, 30_000, `all ${COUNT} receipts`);
    expect(back.acknowledgedReceiptIds()).toEqual(ids);
    expect(back.receipts().every((r) => r.stat === 'DELIVRD' && r.delivery.esmClass === 0x04)).toBe(true);
    await until(() => waitingReceipts(AWAY.systemId), (n) => n === 0, 10_000, 'no receipt left waiting');
  }, 90_000);

  it('refuses a wrong password and an unknown system_id with ESME_RBINDFAIL', async () => {
    expect((await connect('transceiver', { systemId: CUT.systemId, password: 'wrong' })).bindStatus).toBe(ESME_RBINDFAIL);
    expect((await connect('transmitter', { systemId: 'nobody', password: CUT.password })).bindStatus).toBe(ESME_RBINDFAIL);
  });

  it('refuses a bind over --max-binds with ESME_RALYBND, and takes one again once the first has unbound', async () => {
    const first = await bind('transceiver', SINGLE);
    expect((await connect('receiver', SINGLE)).bindStatus).toBe(ESME_RALYBND);
    expect(await first.unbind()).toBe(0);
    await bind('transmitter', SINGLE);
  });

  it('answers submits over the client send rate with ESME_RTHROTTLED, and sends the accepted ones', async () => {
    const esme = await bind('transmitter', SLOW);
    const destinations = Array.from({ length: 6 }, (_, i) => `44770090130${i}`);
    const resps = await esme.submitAll(destinations.flatMap((destination) => cutMessage({ text: 'Burst', scheme: 'single', dataCoding: 0, source: SENDER, destination, registeredDelivery: 0 })));
    const statuses = resps.map((r) => r.status);
    // One part a second: a burst of six at once cannot all be taken.
    expect(statuses.filter((s) => s === ESME_RTHROTTLED).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 0 || s === ESME_RTHROTTLED)).toBe(true);
    const accepted = destinations.filter((_, i) => statuses[i] === 0);
    expect(accepted.length).toBeGreaterThan(0);
    const upstream = await upstreamTo(new Set(accepted), accepted.length);
    expect(upstream.map((s) => s.wire.destination_addr).sort()).toEqual(accepted.sort());
  }, 30_000);

  it('answers the submit its client has no credits left for with ESME_RSUBMITFAIL', async () => {
    const esme = await bind('transmitter', POOR);
    const statuses: number[] = [];
    // One at a time: each reservation is committed before the next submit is read.
    for (const destination of ['447700901401', '447700901402', '447700901403']) {
      const [resp] = await esme.submitAll(cutMessage({ text: 'One credit', scheme: 'single', dataCoding: 0, source: SENDER, destination, registeredDelivery: 0 }));
      statuses.push(resp!.status);
    }
    expect(statuses).toEqual([0, 0, ESME_RSUBMITFAIL]);
  });
});

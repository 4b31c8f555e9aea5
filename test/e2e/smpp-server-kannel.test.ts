/**
 * Kannel (bearerbox + smsbox) as smsgate's SMPP customer: its `smsc = smpp` group binds to
 * smsgate's SMPP server as a transceiver, messages go in through Kannel's sendsms with dlr-mask 3
 * and a dlr-url, smsgate sends them to a receipting test SMSC, and the receipts travel back: SMSC
 * -> smsgate -> deliver_sm to Kannel -> Kannel's dlr-url. Each message arrives upstream once and
 * each DLR reaches the dlr-url, naming smsgate's message id (Kannel's %F: the id in submit_sm_resp).
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { KANNEL_DLR_DELIVERED, KannelCustomer } from '../support/kannel-customer.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { readDatabase, tempDir } from './e2e-setup.js';
import { seedSmppCustomers, SENDER, SmppServerGateway, type SmppAccountSeed } from './smpp-server-setup.js';

const ACCOUNT: SmppAccountSeed = { client: 'acme', systemId: 'kannel', password: 'kannelpw' };
const NUMBERS = ['447700901601', '447700901602', '447700901603'];

let dir: string | undefined;
const stops: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('Kannel customer -> smsgate SMPP server -> test SMSC', () => {
  it('sends each message upstream once and each DLR reaches Kannel\'s dlr-url', async () => {
    dir = tempDir('smpp-server-kannel');
    const smsc = await ReceiptingSmsc.start();
    stops.push(() => smsc.stop());
    const receiver = await WebhookReceiver.start();
    stops.push(() => receiver.close());
    const { gateway, databasePath } = await SmppServerGateway.sqlite(dir, smsc.address);
    stops.push(() => gateway.stop());
    await seedSmppCustomers(gateway.configPath, [{ name: 'acme' }], [ACCOUNT]);
    await gateway.start();

    const kannel = await KannelCustomer.start({
      smsc: { host: '127.0.0.1', port: gateway.smppPort, systemId: ACCOUNT.systemId, password: ACCOUNT.password },
      dlrUrl: receiver.url,
    });
    stops.push(() => kannel.stop());
    await kannel.waitUntilOnline(30_000);
    for (const to of NUMBERS) expect(await kannel.send({ from: SENDER, to, text: `Hello ${to}` })).toBe(202);

    const delivered = () => kannel.dlrsFrom(receiver).filter((dlr) => dlr.type === KANNEL_DLR_DELIVERED);
    await receiver.waitUntil(() => delivered().length >= NUMBERS.length, 30_000, `a delivered DLR per message\n${kannel.logTails()}`);
    expect(Object.fromEntries(smsc.submitsByDestination)).toEqual(Object.fromEntries(NUMBERS.map((n) => [n, 1])));
    expect(delivered().map((dlr) => dlr.to).sort()).toEqual([...NUMBERS].sort());
    // The id Kannel got in each submit_sm_resp (and matched the receipt by) is smsgate's message id.
    const messageIds = readDatabase(databasePath, (db) =>
      (db.prepare('SELECT id FROM campaigns WHERE smpp_account_id IS NOT NULL').all() as { id: string }[]).map((row) => String(row.id)));
    expect(delivered().map((dlr) => dlr.smscMessageId).sort()).toEqual(messageIds.sort());
  }, 90_000);
});

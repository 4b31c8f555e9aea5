import { afterEach, describe, expect, it } from 'vitest';
import type { PDU } from 'smpp';
import type { DeliverResult, DeliverSmFields, DeliveringSession, SubmitOutcome } from '../../../src/smpp-server/contracts.js';
import type { SmppListener } from '../../../src/smpp-server/protocol/listener.js';
import { ACCOUNT, deferred, PackageCustomer, startTestListener, TestHandlers, waitUntil } from './helpers.js';

let listener: SmppListener | undefined;
const customers: PackageCustomer[] = [];

afterEach(async () => {
  for (const customer of customers.splice(0)) customer.close();
  await listener?.close();
  listener = undefined;
});

const RECEIPT_TEXT = 'id:c-1 sub:001 dlvrd:001 submit date:2611261015 done date:2611261016 stat:DELIVRD err:000 text:hello';
const RECEIPT: DeliverSmFields = {
  sourceAddrTon: 1, sourceAddrNpi: 1, sourceAddr: '353871234567', destAddrTon: 5, destAddrNpi: 0, destinationAddr: 'Acme',
  esmClass: 0x04, dataCoding: 0, shortMessageHex: Buffer.from(RECEIPT_TEXT, 'latin1').toString('hex'), receiptedMessageId: 'c-1', messageState: 2,
};

async function boundReceiver(config: { windowSize?: number; responseTimeoutMs?: number } = {}): Promise<{ esme: PackageCustomer; session: DeliveringSession }> {
  listener = await startTestListener(new TestHandlers(), config);
  const esme = await PackageCustomer.connect(listener.address.port);
  customers.push(esme);
  await esme.bind('bind_receiver');
  const sessions = listener.receiversOf(ACCOUNT.id);
  expect(sessions).toHaveLength(1);
  return { esme, session: sessions[0]! };
}

describe('smpp server deliver_sm', () => {
  it('sends a receipt with its text, esm_class, TLVs; deliver_sm_resp 0 is acknowledged', async () => {
    const { esme, session } = await boundReceiver();
    expect(session.freeSlots).toBe(10);
    const result = session.deliver(RECEIPT);
    await waitUntil(() => esme.requestsOf('deliver_sm').length === 1, 'the deliver_sm');
    const pdu = esme.requestsOf('deliver_sm')[0]!;
    expect(pdu.esm_class).toBe(0x04);
    expect(pdu.data_coding).toBe(0);
    expect(pdu.source_addr).toBe('353871234567');
    expect(pdu.destination_addr).toBe('Acme');
    expect(pdu.receipted_message_id).toBe('c-1');
    expect(pdu.message_state).toBe(2);
    expect((pdu.short_message as { message: string }).message).toBe(RECEIPT_TEXT);
    expect(session.freeSlots).toBe(9);
    expect(listener!.views()[0]!.windowInUse).toBe(1);
    esme.session.send(pdu.response());
    await expect(result).resolves.toEqual({ kind: 'acknowledged' });
    expect(session.freeSlots).toBe(10);
  });

  it('a non-zero deliver_sm_resp is refused with its status', async () => {
    const { esme, session } = await boundReceiver();
    const result = session.deliver(RECEIPT);
    await waitUntil(() => esme.requestsOf('deliver_sm').length === 1, 'the deliver_sm');
    esme.session.send(esme.requestsOf('deliver_sm')[0]!.response({ command_status: 0x64 }));
    await expect(result).resolves.toEqual({ kind: 'refused', status: 0x64 });
  });

  it('no deliver_sm_resp within responseTimeoutMs is lost (timeout) and frees the slot', async () => {
    const { esme, session } = await boundReceiver({ responseTimeoutMs: 300 });
    const result = await session.deliver(RECEIPT);
    expect(result).toEqual({ kind: 'lost', reason: 'timeout' });
    expect(esme.requestsOf('deliver_sm')).toHaveLength(1);
    expect(session.freeSlots).toBe(10);
  });

  it('a session closed with a deliver_sm outstanding is lost (closed); deliver on it afterwards too', async () => {
    const { esme, session } = await boundReceiver();
    const result = session.deliver(RECEIPT);
    await waitUntil(() => esme.requestsOf('deliver_sm').length === 1, 'the deliver_sm');
    esme.close();
    await expect(result).resolves.toEqual({ kind: 'lost', reason: 'closed' });
    await expect(session.deliver(RECEIPT)).resolves.toEqual({ kind: 'lost', reason: 'closed' });
    expect(session.freeSlots).toBe(0);
  });

  it('keeps at most windowSize deliver_sm outstanding; the rest go out as responses free slots, in order', async () => {
    const { esme, session } = await boundReceiver({ windowSize: 2 });
    const results: Array<Promise<DeliverResult>> = [1, 2, 3, 4].map((n) => session.deliver({ ...RECEIPT, receiptedMessageId: `c-${n}` }));
    await waitUntil(() => esme.requestsOf('deliver_sm').length === 2, 'two deliver_sm');
    expect(session.freeSlots).toBe(0);
    // The server has handled a later round trip and still sent no third deliver_sm.
    await esme.request('enquire_link');
    expect(esme.requestsOf('deliver_sm')).toHaveLength(2);
    const answer = (pdu: PDU): void => {
      esme.session.send(pdu.response());
    };
    answer(esme.requestsOf('deliver_sm')[0]!);
    await waitUntil(() => esme.requestsOf('deliver_sm').length === 3, 'the third deliver_sm');
    for (const pdu of esme.requestsOf('deliver_sm').slice(1)) answer(pdu);
    await waitUntil(() => esme.requestsOf('deliver_sm').length === 4, 'the fourth deliver_sm');
    answer(esme.requestsOf('deliver_sm')[3]!);
    expect(await Promise.all(results)).toEqual(Array(4).fill({ kind: 'acknowledged' }));
    expect(esme.requestsOf('deliver_sm').map((pdu) => pdu.receipted_message_id)).toEqual(['c-1', 'c-2', 'c-3', 'c-4']);
  });

  it('windowInUse counts both directions: a submit with the handler and a deliver_sm awaiting its response', async () => {
    const handlers = new TestHandlers();
    const submitOutcome = deferred<SubmitOutcome>();
    handlers.onSubmit = () => submitOutcome.promise;
    listener = await startTestListener(handlers);
    const esme = await PackageCustomer.connect(listener.address.port);
    customers.push(esme);
    await esme.bind('bind_transceiver');
    const submit = esme.send('submit_sm', { destination_addr: '353871234567', data_coding: 0, short_message: Buffer.from('a') });
    await waitUntil(() => handlers.submits.length === 1, 'the submit at the handler');
    const delivered = listener.receiversOf(ACCOUNT.id)[0]!.deliver(RECEIPT);
    await waitUntil(() => esme.requestsOf('deliver_sm').length === 1, 'the deliver_sm');
    expect(listener.views()[0]!.windowInUse).toBe(2);
    submitOutcome.resolve({ kind: 'accepted', messageId: 'x' });
    await waitUntil(() => esme.responseTo(submit) !== undefined, 'submit_sm_resp');
    esme.session.send(esme.requestsOf('deliver_sm')[0]!.response());
    await expect(delivered).resolves.toEqual({ kind: 'acknowledged' });
    expect(listener.views()[0]!.windowInUse).toBe(0);
  });

  it('a transmitter is no receiver: receiversOf does not list it', async () => {
    listener = await startTestListener(new TestHandlers());
    const esme = await PackageCustomer.connect(listener.address.port);
    customers.push(esme);
    await esme.bind('bind_transmitter');
    expect(listener.receiversOf(ACCOUNT.id)).toEqual([]);
    expect(listener.accountsWithReceivers()).toEqual([]);
  });
});

describe('smpp server enquire_link', () => {
  it('answers the customer enquire_link', async () => {
    listener = await startTestListener(new TestHandlers());
    const esme = await PackageCustomer.connect(listener.address.port);
    customers.push(esme);
    await esme.bind('bind_transceiver');
    const response = await esme.request('enquire_link');
    expect([response.command, response.command_status]).toEqual(['enquire_link_resp', 0]);
  });

  it('sends enquire_link after enquireLinkIntervalMs of silence; a customer that answers stays bound', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers, { enquireLinkIntervalMs: 100, responseTimeoutMs: 2_000 });
    const esme = await PackageCustomer.connect(listener.address.port);
    customers.push(esme);
    esme.session.on('enquire_link', (pdu: PDU) => esme.session.send(pdu.response()));
    await esme.bind('bind_transceiver');
    await waitUntil(() => esme.requestsOf('enquire_link').length >= 3, 'three enquire_link from the server');
    expect(esme.closed).toBe(false);
    expect(handlers.unbounds).toEqual([]);
    expect(listener.views()).toHaveLength(1);
  });

  it('closes a session whose customer does not answer enquire_link within responseTimeoutMs, and calls unbound', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers, { enquireLinkIntervalMs: 100, responseTimeoutMs: 200 });
    const esme = await PackageCustomer.connect(listener.address.port);
    customers.push(esme);
    await esme.bind('bind_transceiver');
    await waitUntil(() => esme.closed, 'the idle session to close');
    expect(esme.requestsOf('enquire_link')).toHaveLength(1);
    await waitUntil(() => handlers.unbounds.length === 1, 'unbound');
    expect(listener.views()).toEqual([]);
  });

  it('closes a connection that never binds', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers, { enquireLinkIntervalMs: 100, responseTimeoutMs: 200 });
    const esme = await PackageCustomer.connect(listener.address.port);
    customers.push(esme);
    esme.session.on('enquire_link', (pdu: PDU) => esme.session.send(pdu.response()));
    await waitUntil(() => esme.closed, 'the unbound connection to close');
    expect(handlers.unbounds).toEqual([]);
  });
});

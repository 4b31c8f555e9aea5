import { afterEach, describe, expect, it } from 'vitest';
import { SERVER_STATUS, type SubmitOutcome } from '../../../src/smpp-server/contracts.js';
import type { SmppListener } from '../../../src/smpp-server/protocol/listener.js';
import { deferred, PackageCustomer, startTestListener, TestHandlers, waitUntil, type Deferred } from './helpers.js';

let listener: SmppListener | undefined;
const customers: PackageCustomer[] = [];

afterEach(async () => {
  for (const customer of customers.splice(0)) customer.close();
  await listener?.close();
  listener = undefined;
});

async function boundTransmitter(handlers: TestHandlers, windowSize = 10): Promise<PackageCustomer> {
  listener = await startTestListener(handlers, { windowSize });
  const esme = await PackageCustomer.connect(listener.address.port);
  customers.push(esme);
  await esme.bind('bind_transceiver');
  return esme;
}

const SUBMIT = { source_addr: 'Acme', source_addr_ton: 5, destination_addr: '353871234567', dest_addr_ton: 1, dest_addr_npi: 1, data_coding: 0, registered_delivery: 1 };

/** Submits whose handler resolves only when the test says, in arrival order. */
function heldSubmits(handlers: TestHandlers): Array<Deferred<SubmitOutcome>> {
  const held: Array<Deferred<SubmitOutcome>> = [];
  handlers.onSubmit = () => {
    const outcome = deferred<SubmitOutcome>();
    held.push(outcome);
    return outcome.promise;
  };
  return held;
}

describe('smpp server submit_sm', () => {
  it('passes the submit_sm fields to the handler and answers submit_sm_resp with its message id only once it resolves', async () => {
    const handlers = new TestHandlers();
    const held = heldSubmits(handlers);
    const esme = await boundTransmitter(handlers);
    const sequence = esme.send('submit_sm', { ...SUBMIT, short_message: Buffer.from('hello') });
    await waitUntil(() => handlers.submits.length === 1, 'the submit to reach the handler');
    expect(handlers.submits[0]!.fields).toMatchObject({
      sourceAddr: 'Acme', sourceAddrTon: 5, destinationAddr: '353871234567', destAddrTon: 1, destAddrNpi: 1,
      dataCoding: 0, registeredDelivery: 1, shortMessage: Buffer.from('hello'),
    });
    expect(handlers.submits[0]!.session.sessionId).toBe('s1');
    // The server has read and answered a later PDU, and still owes the submit its response.
    expect((await esme.request('enquire_link')).command).toBe('enquire_link_resp');
    expect(esme.responseTo(sequence)).toBeUndefined();
    expect(listener!.views()[0]!.windowInUse).toBe(1);
    held[0]!.resolve({ kind: 'accepted', messageId: 'c-1001' });
    await waitUntil(() => esme.responseTo(sequence) !== undefined, 'submit_sm_resp');
    const response = esme.responseTo(sequence)!;
    expect([response.command, response.command_status, response['message_id']]).toEqual(['submit_sm_resp', 0, 'c-1001']);
    expect(listener!.submitCounts()).toEqual([{ systemId: 'cust1', status: 'ESME_ROK', count: 1 }]);
    expect(listener!.views()[0]!.submitsPerSecond).toBe(0.1);
  });

  it('answers submits in the order their handlers resolve, each with its own sequence number', async () => {
    const handlers = new TestHandlers();
    const held = heldSubmits(handlers);
    const esme = await boundTransmitter(handlers);
    const sequences = [1, 2, 3].map((n) => esme.send('submit_sm', { ...SUBMIT, short_message: Buffer.from(`m${n}`) }));
    await waitUntil(() => held.length === 3, 'three submits at the handler');
    for (const index of [2, 0, 1]) {
      held[index]!.resolve({ kind: 'accepted', messageId: `id-${index + 1}` });
      await waitUntil(() => esme.responseTo(sequences[index]!) !== undefined, `the response to submit ${index + 1}`);
    }
    const responses = esme.received.filter((pdu) => pdu.command === 'submit_sm_resp');
    expect(responses.map((pdu) => [pdu.sequence_number, pdu['message_id']])).toEqual([
      [sequences[2], 'id-3'],
      [sequences[0], 'id-1'],
      [sequences[1], 'id-2'],
    ]);
  });

  it('a request over the window is answered ESME_RTHROTTLED at once; a freed place takes the next', async () => {
    const handlers = new TestHandlers();
    const held = heldSubmits(handlers);
    const esme = await boundTransmitter(handlers, 3);
    const sequences = [1, 2, 3].map((n) => esme.send('submit_sm', { ...SUBMIT, short_message: Buffer.from(`m${n}`) }));
    await waitUntil(() => held.length === 3, 'three submits at the handler');
    const over = await esme.request('submit_sm', { ...SUBMIT, short_message: Buffer.from('m4') });
    expect([over.command, over.command_status]).toEqual(['submit_sm_resp', SERVER_STATUS.throttled]);
    const query = await esme.request('query_sm', { message_id: 'x', source_addr: 'Acme' });
    expect(query.command_status).toBe(SERVER_STATUS.throttled);
    expect(handlers.submits).toHaveLength(3);
    expect(listener!.views()[0]!.windowInUse).toBe(3);
    held[1]!.resolve({ kind: 'accepted', messageId: 'id-2' });
    await waitUntil(() => esme.responseTo(sequences[1]!) !== undefined, 'the second response');
    const fifth = esme.send('submit_sm', { ...SUBMIT, short_message: Buffer.from('m5') });
    await waitUntil(() => held.length === 4, 'the fifth submit at the handler');
    held[3]!.resolve({ kind: 'refused', status: SERVER_STATUS.submitFailed });
    await waitUntil(() => esme.responseTo(fifth) !== undefined, 'the fifth response');
    expect(esme.responseTo(fifth)!.command_status).toBe(SERVER_STATUS.submitFailed);
    const counts = Object.fromEntries(listener!.submitCounts().map((count) => [count.status, count.count]));
    expect(counts).toEqual({ ESME_RTHROTTLED: 1, ESME_ROK: 1, ESME_RSUBMITFAIL: 1 });
  });

  it('a handler that throws is answered ESME_RSYSERR and the link is kept', async () => {
    const handlers = new TestHandlers();
    let calls = 0;
    handlers.onSubmit = async () => {
      calls++;
      if (calls === 1) throw new Error('disk full');
      return { kind: 'accepted', messageId: 'after' };
    };
    const esme = await boundTransmitter(handlers);
    const failed = await esme.request('submit_sm', { ...SUBMIT, short_message: Buffer.from('a') });
    expect(failed.command_status).toBe(SERVER_STATUS.systemError);
    const next = await esme.request('submit_sm', { ...SUBMIT, short_message: Buffer.from('b') });
    expect([next.command_status, next['message_id']]).toEqual([0, 'after']);
    expect(listener!.views()[0]!.windowInUse).toBe(0);
  });

  it('a slow handler on one session does not hold up another session', async () => {
    const handlers = new TestHandlers();
    const slow = deferred<SubmitOutcome>();
    handlers.onSubmit = async (session) => (session.sessionId === 's1' ? slow.promise : { kind: 'accepted', messageId: 'fast' });
    const first = await boundTransmitter(handlers);
    const second = await PackageCustomer.connect(listener!.address.port);
    customers.push(second);
    await second.bind('bind_transmitter');
    const held = first.send('submit_sm', { ...SUBMIT, short_message: Buffer.from('slow') });
    await waitUntil(() => handlers.submits.length === 1, 'the slow submit at the handler');
    const answer = await second.request('submit_sm', { ...SUBMIT, short_message: Buffer.from('fast') });
    expect(answer['message_id']).toBe('fast');
    expect(first.responseTo(held)).toBeUndefined();
    slow.resolve({ kind: 'accepted', messageId: 'slow' });
    await waitUntil(() => first.responseTo(held) !== undefined, 'the slow response');
  });

  it('an unbind waits for the responses still owed, then unbind_resp', async () => {
    const handlers = new TestHandlers();
    const held = heldSubmits(handlers);
    const esme = await boundTransmitter(handlers);
    const submit = esme.send('submit_sm', { ...SUBMIT, short_message: Buffer.from('a') });
    await waitUntil(() => held.length === 1, 'the submit at the handler');
    const unbind = esme.send('unbind');
    // Taken while unbinding: refused.
    const late = await esme.request('submit_sm', { ...SUBMIT, short_message: Buffer.from('b') });
    expect(late.command_status).toBe(SERVER_STATUS.invalidBindStatus);
    expect(esme.responseTo(unbind)).toBeUndefined();
    held[0]!.resolve({ kind: 'accepted', messageId: 'kept' });
    await waitUntil(() => esme.responseTo(unbind) !== undefined, 'unbind_resp');
    const order = esme.received.filter((pdu) => pdu.sequence_number === submit || pdu.sequence_number === unbind).map((pdu) => pdu.command);
    expect(order).toEqual(['submit_sm_resp', 'unbind_resp']);
    expect(esme.responseTo(submit)!['message_id']).toBe('kept');
    await waitUntil(() => esme.closed && handlers.unbounds.length === 1, 'close and unbound');
  });

  it('query_sm and cancel_sm go to their handlers and are answered with what they say', async () => {
    const handlers = new TestHandlers();
    handlers.queryOutcome = { kind: 'found', finalDate: '261126101500000+', messageState: 2, errorCode: 0 };
    const esme = await boundTransmitter(handlers);
    const query = await esme.request('query_sm', { message_id: 'c-9', source_addr: 'Acme' });
    expect([query.command_status, query['message_id'], query['message_state'], query['error_code']]).toEqual([0, 'c-9', 2, 0]);
    expect(query['final_date']).toBeInstanceOf(Date);
    handlers.queryOutcome = { kind: 'refused', status: SERVER_STATUS.queryFailed };
    expect((await esme.request('query_sm', { message_id: 'c-10' })).command_status).toBe(SERVER_STATUS.queryFailed);
    handlers.cancelStatus = SERVER_STATUS.cancelFailed;
    const cancel = await esme.request('cancel_sm', { message_id: 'c-9', source_addr: 'Acme', destination_addr: '353871234567' });
    expect([cancel.command, cancel.command_status]).toEqual(['cancel_sm_resp', SERVER_STATUS.cancelFailed]);
    expect(handlers.queries).toEqual([{ messageId: 'c-9', sourceAddr: 'Acme' }, { messageId: 'c-10', sourceAddr: '' }]);
    expect(handlers.cancels).toEqual([{ messageId: 'c-9', sourceAddr: 'Acme', destinationAddr: '353871234567' }]);
  });

  it('a command the server does not take gets generic_nack ESME_RINVCMDID on a bound link, which stays up', async () => {
    const handlers = new TestHandlers();
    const esme = await boundTransmitter(handlers);
    const nack = await esme.request('replace_sm', { message_id: 'c-1', short_message: Buffer.from('x') });
    expect([nack.command, nack.command_status]).toEqual(['generic_nack', 0x03]);
    expect((await esme.request('enquire_link')).command).toBe('enquire_link_resp');
  });
});

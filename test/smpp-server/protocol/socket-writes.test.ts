/**
 * Syscalls a PDU on the SMPP server's customer link: the submit_sm_resp that one intake commit
 * releases, and the deliver_sm a delivery pass sends, leave in one socket write, not one each.
 * Counted where net.Socket hands the bytes to its handle, on a real bind over loopback; each
 * submit_sm_resp still goes only after its submit's handler resolved (its commit).
 */
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliverResult, DeliverSmFields, SubmitOutcome } from '../../../src/smpp-server/contracts.js';
import type { SmppListener } from '../../../src/smpp-server/protocol/listener.js';
import { countSocketWrites, type SocketWriteCounter } from '../../support/socket-writes.js';
import { ACCOUNT, PackageCustomer, startTestListener, TestHandlers, waitUntil } from './helpers.js';

const BATCH = 50;

let listener: SmppListener | undefined;
let counter: SocketWriteCounter | undefined;
const customers: PackageCustomer[] = [];

afterEach(async () => {
  counter?.restore();
  counter = undefined;
  for (const customer of customers.splice(0)) customer.close();
  await listener?.close();
  listener = undefined;
});

/** The server's end of a customer connection: the socket on the listener's port. */
function serverSide(port: number): (socket: Socket) => boolean {
  return (socket) => socket.localPort === port;
}

const SUBMIT = { source_addr: 'Acme', source_addr_ton: 5, destination_addr: '353871234567', dest_addr_ton: 1, dest_addr_npi: 1, data_coding: 0, registered_delivery: 1 };

const RECEIPT_TEXT = 'id:c-1 sub:001 dlvrd:001 submit date:2611261015 done date:2611261016 stat:DELIVRD err:000 text:hello';
const RECEIPT: DeliverSmFields = {
  sourceAddrTon: 1, sourceAddrNpi: 1, sourceAddr: '353871234567', destAddrTon: 5, destAddrNpi: 0, destinationAddr: 'Acme',
  esmClass: 0x04, dataCoding: 0, shortMessageHex: Buffer.from(RECEIPT_TEXT, 'latin1').toString('hex'), receiptedMessageId: 'c-1', messageState: 2,
};

describe('SMPP server: PDUs of one turn in one socket write', () => {
  it(`answers ${BATCH} submit_sm accepted by one commit with one write of ${BATCH} submit_sm_resp, none before it`, async () => {
    const handlers = new TestHandlers();
    // The intake's group commit: every submit waits for one commit, which settles them all in one
    // timer callback.
    const waiting: Array<() => void> = [];
    let writesBeforeCommit: number | null = null;
    handlers.onSubmit = () => new Promise<SubmitOutcome>((resolve) => {
      const messageId = `m${waiting.length + 1}`;
      waiting.push(() => resolve({ kind: 'accepted', messageId }));
      if (waiting.length === BATCH) {
        setTimeout(() => {
          writesBeforeCommit = counter?.tally.writes ?? null;
          for (const accept of waiting) accept();
        }, 1);
      }
    });
    listener = await startTestListener(handlers, { windowSize: BATCH * 2 });
    const esme = await PackageCustomer.connect(listener.address.port);
    customers.push(esme);
    await esme.bind('bind_transceiver');
    counter = countSocketWrites(serverSide(listener.address.port));
    const sequences = Array.from({ length: BATCH }, (_, i) => esme.send('submit_sm', { ...SUBMIT, short_message: Buffer.from(`message ${i}`) }));
    await waitUntil(() => esme.received.filter((pdu) => pdu.command === 'submit_sm_resp').length === BATCH, 'every submit_sm_resp');
    // Nothing was written to the customer before the commit settled the submits.
    expect(writesBeforeCommit).toBe(0);
    expect(sequences.map((sequence) => esme.responseTo(sequence)?.message_id)).toEqual(Array.from({ length: BATCH }, (_, i) => `m${i + 1}`));
    expect(counter.tally).toMatchObject({ writes: 1, chunks: BATCH });
  });

  it(`sends ${BATCH} deliver_sm of one delivery pass in one write`, async () => {
    listener = await startTestListener(new TestHandlers(), { windowSize: BATCH });
    const esme = await PackageCustomer.connect(listener.address.port);
    customers.push(esme);
    await esme.bind('bind_receiver');
    const [session] = listener.receiversOf(ACCOUNT.id);
    if (session === undefined) throw new Error('no receiver session');
    expect(session.freeSlots).toBe(BATCH);
    counter = countSocketWrites(serverSide(listener.address.port));
    // As the delivery sender fills the free slots: every deliver_sm in the same turn.
    const results: Promise<DeliverResult>[] = [];
    for (let i = 0; i < BATCH; i++) results.push(session.deliver(RECEIPT));
    await waitUntil(() => esme.requestsOf('deliver_sm').length === BATCH, 'every deliver_sm at the customer');
    expect(counter.tally).toMatchObject({ writes: 1, chunks: BATCH });
    for (const pdu of esme.requestsOf('deliver_sm')) esme.session.send(pdu.response());
    expect(await Promise.all(results)).toEqual(Array.from({ length: BATCH }, () => ({ kind: 'acknowledged' })));
  });
});

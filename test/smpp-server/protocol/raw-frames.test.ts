import smpp from 'smpp';
import { afterEach, describe, expect, it } from 'vitest';
import type { SmppListener } from '../../../src/smpp-server/protocol/listener.js';
import { ACCOUNT, deferred, header, PASSWORD, rawPdu, RawCustomer, startTestListener, TestHandlers, waitUntil } from './helpers.js';

let listener: SmppListener | undefined;
const customers: RawCustomer[] = [];

afterEach(async () => {
  for (const customer of customers.splice(0)) customer.close();
  await listener?.close();
  listener = undefined;
});

/** SMPP 3.4 §5.1.2 / §5.1.3 values the assertions read. */
const GENERIC_NACK = 0x80000000;
const ENQUIRE_LINK = 0x00000015;
const ENQUIRE_LINK_RESP = 0x80000015;
const SUBMIT_SM = 0x00000004;
const QUERY_SM = 0x00000003;
const BIND_TRANSCEIVER_RESP = 0x80000009;
const ESME_RINVCMDLEN = 0x02;
const ESME_RINVCMDID = 0x03;

function bindTransceiver(sequenceNumber: number): Buffer {
  return new smpp.PDU('bind_transceiver', { sequence_number: sequenceNumber, system_id: ACCOUNT.systemId, password: PASSWORD, interface_version: 0x34 }).toBuffer();
}

async function boundRaw(handlers: TestHandlers): Promise<RawCustomer> {
  listener = await startTestListener(handlers);
  const esme = await RawCustomer.connect(listener.address.port);
  customers.push(esme);
  esme.write(bindTransceiver(1));
  expect(header(await esme.nextFrame(0))).toEqual({ commandId: BIND_TRANSCEIVER_RESP, commandStatus: 0, sequenceNumber: 1 });
  return esme;
}

/** The link is still up and read: an enquire_link is answered. */
async function expectLinkKept(esme: RawCustomer, sequenceNumber: number): Promise<void> {
  const index = esme.frames.length;
  esme.write(rawPdu(ENQUIRE_LINK, sequenceNumber));
  expect(header(await esme.nextFrame(index))).toEqual({ commandId: ENQUIRE_LINK_RESP, commandStatus: 0, sequenceNumber });
  expect(esme.closed).toBe(false);
}

describe('smpp server, PDUs it cannot take', () => {
  it('an unknown command_id gets generic_nack ESME_RINVCMDID with its sequence number, before and after a bind, and the link is kept', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers);
    const esme = await RawCustomer.connect(listener.address.port);
    customers.push(esme);
    esme.write(rawPdu(0x00000999, 55, Buffer.from('xyz')));
    expect(header(await esme.nextFrame(0))).toEqual({ commandId: GENERIC_NACK, commandStatus: ESME_RINVCMDID, sequenceNumber: 55 });
    esme.write(bindTransceiver(2));
    expect(header(await esme.nextFrame(1)).commandStatus).toBe(0);
    esme.write(rawPdu(0x00000999, 56));
    expect(header(await esme.nextFrame(2))).toEqual({ commandId: GENERIC_NACK, commandStatus: ESME_RINVCMDID, sequenceNumber: 56 });
    await expectLinkKept(esme, 57);
  });

  it('a submit_sm whose fields run past command_length gets generic_nack ESME_RINVCMDLEN, the handler is not called, the link is kept', async () => {
    const handlers = new TestHandlers();
    const esme = await boundRaw(handlers);
    // service_type without its NULL terminator: nothing after it can be read.
    esme.write(rawPdu(SUBMIT_SM, 70, Buffer.from('CMT')));
    expect(header(await esme.nextFrame(1))).toEqual({ commandId: GENERIC_NACK, commandStatus: ESME_RINVCMDLEN, sequenceNumber: 70 });
    await expectLinkKept(esme, 71);
    expect(handlers.submits).toEqual([]);
  });

  it('a query_sm with a TLV cut short gets generic_nack ESME_RINVCMDLEN and the link is kept', async () => {
    const handlers = new TestHandlers();
    const esme = await boundRaw(handlers);
    // message_id "m1", source_addr_ton/npi, source_addr "", then message_state (0x0427) announcing 1 octet and carrying none.
    const body = Buffer.concat([Buffer.from('m1\0', 'latin1'), Buffer.from([0, 0, 0]), Buffer.from([0x04, 0x27, 0x00, 0x01])]);
    esme.write(rawPdu(QUERY_SM, 80, body));
    expect(header(await esme.nextFrame(1))).toEqual({ commandId: GENERIC_NACK, commandStatus: ESME_RINVCMDLEN, sequenceNumber: 80 });
    await expectLinkKept(esme, 81);
    expect(handlers.queries).toEqual([]);
  });

  it('a command_length below the header closes the connection (and the bind is given back)', async () => {
    const handlers = new TestHandlers();
    const esme = await boundRaw(handlers);
    const bad = rawPdu(ENQUIRE_LINK, 90);
    bad.writeUInt32BE(8, 0);
    esme.write(bad);
    await waitUntil(() => esme.closed, 'the connection to close');
    await waitUntil(() => handlers.unbounds.length === 1, 'unbound');
  });

  it('reads a bind and a submit_sm sent one octet at a time as when sent whole', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers);
    const esme = await RawCustomer.connect(listener.address.port);
    customers.push(esme);
    esme.socket.setNoDelay(true);
    const submit = new smpp.PDU('submit_sm', { sequence_number: 2, destination_addr: '353871234567', data_coding: 8, short_message: Buffer.from('00480069', 'hex') }).toBuffer();
    for (const byte of Buffer.concat([bindTransceiver(1), submit])) esme.write(Buffer.from([byte]));
    expect(header(await esme.nextFrame(0))).toEqual({ commandId: BIND_TRANSCEIVER_RESP, commandStatus: 0, sequenceNumber: 1 });
    const response = await esme.nextFrame(1);
    expect(header(response)).toEqual({ commandId: 0x80000004, commandStatus: 0, sequenceNumber: 2 });
    expect(response.subarray(16).toString('latin1')).toBe('m1\0');
    expect(handlers.submits[0]!.fields).toMatchObject({ destinationAddr: '353871234567', dataCoding: 8, shortMessage: Buffer.from('00480069', 'hex') });
  });

  it('PDUs sent right behind a bind, before its bind_resp, are taken in order once the bind is decided', async () => {
    const handlers = new TestHandlers();
    const decision = deferred<void>();
    handlers.onBind = async (request) => {
      await decision.promise;
      return handlers.decideBind(request);
    };
    listener = await startTestListener(handlers);
    const esme = await RawCustomer.connect(listener.address.port);
    customers.push(esme);
    const submit = new smpp.PDU('submit_sm', { sequence_number: 2, destination_addr: '353871234567', data_coding: 0, short_message: Buffer.from('hi') }).toBuffer();
    esme.write(Buffer.concat([bindTransceiver(1), submit, rawPdu(ENQUIRE_LINK, 3)]));
    await waitUntil(() => handlers.binds.length === 1, 'the bind at the handler');
    decision.resolve();
    await esme.nextFrame(2);
    const [bindResp, ...rest] = esme.frames.map((frame) => header(frame));
    expect(bindResp).toEqual({ commandId: BIND_TRANSCEIVER_RESP, commandStatus: 0, sequenceNumber: 1 });
    // After the bind_resp; between themselves in any order (the enquire_link is answered at once, the submit when its handler resolves).
    expect(rest.sort((a, b) => a.sequenceNumber - b.sequenceNumber)).toEqual([
      { commandId: 0x80000004, commandStatus: 0, sequenceNumber: 2 },
      { commandId: ENQUIRE_LINK_RESP, commandStatus: 0, sequenceNumber: 3 },
    ]);
    expect(handlers.submits).toHaveLength(1);
  });
});

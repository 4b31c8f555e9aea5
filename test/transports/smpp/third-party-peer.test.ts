/**
 * SmppTransport against a third-party SMSC: test/support/perl-smsc/smsc.pl on Perl's Net::SMPP
 * (Debian libnet-smpp-perl), a different SMPP implementation from the `smpp` npm package the
 * transport and the test SMSC are built on. Bytes are checked as Net::SMPP decoded them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SmppTransport, type SmppTransportConfig } from '../../../src/transports/smpp/index.js';
import type { PartOutcome } from '../../../src/transports/transport.js';
import { PerlSmsc, type PerlSmscOptions } from '../../support/perl-smsc/perl-smsc.js';
import { outbound, recorder, waitFor, type Recorder } from './helpers.js';

interface PeerRig {
  smsc: PerlSmsc;
  transport: SmppTransport;
  handlers: Recorder;
}

let rig: PeerRig | undefined;
afterEach(async () => {
  await rig?.transport.stop(1_000);
  await rig?.smsc.stop();
  rig = undefined;
});

async function startPeer(smscOptions: PerlSmscOptions = {}, overrides: Partial<SmppTransportConfig> = {}): Promise<PeerRig> {
  const smsc = await PerlSmsc.start(smscOptions);
  const transport = new SmppTransport({
    name: 'perl', type: 'smpp', ...smsc.address, systemId: 'esme', password: 'secret', bindMode: 'transceiver',
    responseTimeoutMs: 5_000, reconnect: { initialDelayMs: 100, maxDelayMs: 500 }, ...overrides,
  });
  const handlers = recorder();
  transport.setHandlers(handlers);
  await transport.start();
  rig = { smsc, transport, handlers };
  return rig;
}

function acceptedIds(outcomes: PartOutcome[]): string[] {
  return outcomes.map((outcome) => (outcome.kind === 'accepted' ? outcome.messageId : `${outcome.kind}:${outcome.kind === 'not-sent' ? outcome.reason : outcome.status}`));
}

describe('SmppTransport against a Net::SMPP SMSC (third party)', () => {
  it('binds as a transceiver with SMPP 3.4, sends a 1-part GSM-7 text and matches its receipt', async () => {
    const { smsc, transport, handlers } = await startPeer();
    expect(transport.currentState().state).toBe('bound');
    expect(await smsc.waitFor('bind')).toMatchObject([{ command: 'bind_transceiver', system_id: 'esme', interface_version: 0x34, accepted: true }]);

    const outcomes = await transport.submit(outbound('Hello from smsgate'));
    expect(acceptedIds(outcomes)).toEqual(['4000000000']);
    const [submit] = await smsc.waitForSubmits(1);
    expect(submit).toMatchObject({
      source_addr: 'smsgate', source_addr_ton: 5, source_addr_npi: 0,
      destination_addr: '353871234567', dest_addr_ton: 1, dest_addr_npi: 1,
      esm_class: 0, data_coding: 0, registered_delivery: 1, tlvs: {},
    });
    // GSM 03.38 septets one per octet: these letters have the same values as ASCII.
    expect(submit!.short_message).toBe(Buffer.from('Hello from smsgate', 'ascii').toString('hex'));

    await waitFor(() => handlers.receipts.length === 1, 'the receipt');
    expect(handlers.receipts[0]).toMatchObject({ messageId: '4000000000', status: 'DELIVRD', final: true, errorCode: '000' });
    await smsc.waitFor('deliver_sm_resp');
    expect(smsc.eventsOf('deliver_sm_resp')).toMatchObject([{ status: 0 }]);
  });

  it('3-part GSM-7 with an 8-bit concatenation UDH: esm_class 0x40, 05 00 03 ref 03 n, three receipts matched', async () => {
    const { smsc, transport, handlers } = await startPeer();
    const text = 'a'.repeat(153) + 'b'.repeat(153) + 'c'.repeat(14);
    const outcomes = await transport.submit(outbound(text, { concatReference: 0x2a }));
    const ids = acceptedIds(outcomes);
    expect(ids).toEqual(['4000000000', '4000000001', '4000000002']);
    const submits = await smsc.waitForSubmits(3);
    expect(submits.map((submit) => submit.esm_class)).toEqual([0x40, 0x40, 0x40]);
    expect(submits.map((submit) => submit.data_coding)).toEqual([0, 0, 0]);
    expect(submits.map((submit) => submit.short_message.slice(0, 12))).toEqual(['0500032a0301', '0500032a0302', '0500032a0303']);
    expect(submits.map((submit) => submit.short_message.length / 2 - 6)).toEqual([153, 153, 14]);
    expect(submits[1]!.short_message.slice(12)).toBe('62'.repeat(153));

    await waitFor(() => handlers.receipts.length === 3, 'three receipts');
    expect(handlers.receipts.map((receipt) => receipt.messageId).sort()).toEqual(ids);
  });

  it('2-part UCS-2: data_coding 8, UDH then big-endian UTF-16', async () => {
    const { smsc, transport, handlers } = await startPeer();
    const text = 'ж'.repeat(67) + 'щ'.repeat(10); // 77 > 70 code units: 67 + 10
    const outcomes = await transport.submit(outbound(text, { concatReference: 0x07 }));
    expect(acceptedIds(outcomes)).toEqual(['4000000000', '4000000001']);
    const submits = await smsc.waitForSubmits(2);
    expect(submits.map((submit) => [submit.esm_class, submit.data_coding])).toEqual([[0x40, 8], [0x40, 8]]);
    expect(submits.map((submit) => submit.short_message.slice(0, 12))).toEqual(['050003070201', '050003070202']);
    expect(submits[0]!.short_message.slice(12)).toBe('0436'.repeat(67));
    expect(submits[1]!.short_message.slice(12)).toBe('0449'.repeat(10));
    await waitFor(() => handlers.receipts.length === 2, 'two receipts');
  });

  it('SAR TLVs and message_payload as Net::SMPP decodes them', async () => {
    const { smsc, transport } = await startPeer({ receipt: 'none' }, { concatenation: 'sar' });
    await transport.submit(outbound('x'.repeat(153) + 'y'.repeat(10), { concatReference: 0x0102 }));
    const sarSubmits = await smsc.waitForSubmits(2);
    expect(sarSubmits.map((submit) => submit.tlvs)).toEqual([
      { '0x020C': '0102', '0x020E': '02', '0x020F': '01' },
      { '0x020C': '0102', '0x020E': '02', '0x020F': '02' },
    ]);
    expect(sarSubmits.map((submit) => submit.esm_class)).toEqual([0, 0]);

    await transport.stop(1_000);
    rig = await startPeer({ receipt: 'none' }, { concatenation: 'payload' });
    const text = 'p'.repeat(200);
    await rig.transport.submit(outbound(text));
    const [payloadSubmit] = await rig.smsc.waitForSubmits(1);
    expect(payloadSubmit!.short_message).toBe('');
    expect(payloadSubmit!.tlvs['0x0424']).toBe(Buffer.from(text, 'ascii').toString('hex'));
  });

  it('hex ids with receipted_message_id and message_state TLVs match the accepted id', async () => {
    const { transport, handlers } = await startPeer({ idFormat: 'hex', receipt: 'tlv' });
    const outcomes = await transport.submit(outbound('hex please'));
    expect(acceptedIds(outcomes)).toEqual(['EE6B2800']); // 4,000,000,000 = 0xEE6B2800
    await waitFor(() => handlers.receipts.length === 1, 'the receipt');
    expect(handlers.receipts[0]).toMatchObject({ messageId: 'EE6B2800', status: 'DELIVRD', final: true });
  });

  it('binds a transmitter and a receiver; the receipt comes over the receiver', async () => {
    const { smsc, transport, handlers } = await startPeer({}, { bindMode: 'transmitter-receiver' });
    expect((await smsc.waitFor('bind', 10_000, 2)).map((bind) => bind['command']).sort()).toEqual(['bind_receiver', 'bind_transmitter']);
    const ids = acceptedIds(await transport.submit(outbound('two connections')));
    await waitFor(() => handlers.receipts.length === 1, 'the receipt');
    expect(handlers.receipts[0]!.messageId).toBe(ids[0]);
  });

  it('50 messages with a window of 10: every one accepted once, every receipt matched', async () => {
    const { smsc, transport, handlers } = await startPeer({}, { window: 10 });
    const outcomes = (await Promise.all(Array.from({ length: 50 }, (_, i) => transport.submit(outbound(`message ${i}`))))).flat();
    const ids = acceptedIds(outcomes);
    expect(new Set(ids).size).toBe(50);
    expect(await smsc.waitForSubmits(50)).toHaveLength(50);
    await waitFor(() => handlers.receipts.length === 50, '50 receipts');
    expect(handlers.receipts.map((receipt) => receipt.messageId).sort()).toEqual([...ids].sort());
  });

  it('keeps the link with enquire_link and unbinds on stop', async () => {
    const { smsc, transport } = await startPeer({}, { enquireLinkIntervalMs: 100 });
    await smsc.waitFor('enquire_link', 10_000, 2);
    expect(transport.currentState().state).toBe('bound');
    await transport.stop(1_000);
    expect(await smsc.waitFor('unbind')).toHaveLength(1);
  });

  it('a wrong password is a clear down reason, not a retry storm', async () => {
    const { smsc, transport } = await startPeer({ password: 'other' });
    expect(transport.currentState()).toMatchObject({ state: 'down' });
    const state = transport.currentState();
    expect(state.state === 'down' ? state.reason : '').toMatch(/ESME_RINVPASWD/);
    expect(await smsc.waitFor('bind')).toMatchObject([{ accepted: false }]);
    expect(transport.bindAttempts()).toEqual([1]);
  });
});

/**
 * Mobile-originated messages from a third-party SMSC (Perl Net::SMPP, test/support/perl-smsc)
 * through SmppTransport into the InboundService on a real SQLite file: 8- and 16-bit UDH parts out
 * of order, a national shift table, SAR TLVs with UCS-2 cut inside a surrogate pair,
 * message_payload, 8-bit data, and a part repeated after a reconnect.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { buildUdh, encodeGsm7Septets, encodeUcs2, nationalShiftIes } from '../../src/sms/index.js';
import { concatIe } from '../../src/sms/udh.js';
import { SmppTransport } from '../../src/transports/smpp/index.js';
import { PerlSmsc, type PerlMo } from '../support/perl-smsc/perl-smsc.js';
import { waitFor } from '../transports/smpp/helpers.js';
import { inboundRig, type InboundRig } from './inbound-fixture.js';

const PHONE = '353861234567';
const SHORT_CODE = '50123';
const UDHI = 0x40;

let smsc: PerlSmsc | undefined;
let transport: SmppTransport | undefined;
let rig: InboundRig | undefined;

afterEach(async () => {
  await transport?.stop(1_000);
  await smsc?.stop();
  await rig?.close();
  transport = undefined;
  smsc = undefined;
  rig = undefined;
});

async function startTransport(): Promise<SmppTransport> {
  const r = rig as InboundRig;
  const s = smsc as PerlSmsc;
  const t = new SmppTransport({
    name: 'perl', type: 'smpp', ...s.address, systemId: 'esme', password: 'secret', bindMode: 'transceiver',
    responseTimeoutMs: 5_000, reconnect: { initialDelayMs: 100, maxDelayMs: 500 },
  });
  t.setHandlers({
    onReceipt: async () => undefined,
    onInbound: async (message) => {
      await await r.service.receive('perl', message);
    },
    onState: () => undefined,
  });
  await t.start();
  await waitFor(() => t.currentState().state === 'bound', 'the bind');
  return t;
}

async function start(): Promise<void> {
  rig = await inboundRig();
  smsc = await PerlSmsc.start({ receipt: 'none' });
  transport = await startTransport();
}

function hex(...chunks: Uint8Array[]): string {
  return Buffer.concat(chunks.map((chunk) => Buffer.from(chunk))).toString('hex');
}

function gsm(text: string): Uint8Array {
  return encodeGsm7Septets(text);
}

async function send(mo: PerlMo): Promise<void> {
  await (smsc as PerlSmsc).deliverMo(mo);
}

async function acks(count: number): Promise<void> {
  const responses = await (smsc as PerlSmsc).waitFor('deliver_sm_resp', 10_000, count);
  expect(responses.map((r) => r['status'])).toEqual(Array.from({ length: count }, () => 0));
}

describe('SMPP MO through the Net::SMPP SMSC', () => {
  it('joins three 8-bit UDH parts sent 3, 1, 2 into one message once the last arrives', async () => {
    await start();
    const r = rig as InboundRig;
    const parts = ['Hello, ', 'this is ', 'three parts'];
    for (const sequence of [3, 1]) {
      await send({ source_addr: PHONE, destination_addr: SHORT_CODE, esm_class: UDHI, short_message: hex(buildUdh([concatIe(0x42, 3, sequence, 8)]), gsm(parts[sequence - 1] as string)) });
    }
    await acks(2);
    expect(r.messages()).toEqual([]);
    expect(r.partsLeft()).toBe(2);
    await send({ source_addr: PHONE, destination_addr: SHORT_CODE, esm_class: UDHI, short_message: hex(buildUdh([concatIe(0x42, 3, 2, 8)]), gsm(parts[1] as string)) });
    await acks(3);
    await waitFor(() => r.messages().length === 1, 'the whole message');
    expect(r.messages()[0]).toMatchObject({ sender: PHONE, recipient: SHORT_CODE, text: 'Hello, this is three parts', incomplete: 0, transport: 'perl' });
    expect(r.partsLeft()).toBe(0);
  });

  it('joins 16-bit UDH parts and decodes each with the national single shift table its UDH names', async () => {
    await start();
    const r = rig as InboundRig;
    // TS 23.038 A.2.2 Spanish single shift: ç is ESC 0x09 (the default extension has no ç).
    const shift = { single: 'spanish' } as const;
    const first = encodeGsm7Septets('Señor Garçon, ', shift);
    const second = encodeGsm7Septets('merçi', shift);
    await send({ source_addr: PHONE, destination_addr: SHORT_CODE, esm_class: UDHI, short_message: hex(buildUdh([concatIe(0x1234, 2, 2, 16), ...nationalShiftIes(shift)]), second) });
    await send({ source_addr: PHONE, destination_addr: SHORT_CODE, esm_class: UDHI, short_message: hex(buildUdh([concatIe(0x1234, 2, 1, 16), ...nationalShiftIes(shift)]), first) });
    await waitFor(() => r.messages().length === 1, 'the whole message');
    expect(r.messages()[0]?.text).toBe('Señor Garçon, merçi');
  });

  it('joins SAR parts of UCS-2 cut inside a surrogate pair as octets, so the emoji survives', async () => {
    await start();
    const r = rig as InboundRig;
    const text = 'Smile \u{1F600} please';
    const octets = encodeUcs2(text);
    // Cut after the high surrogate: part 1 ends with D8 3D, part 2 starts with DE 00.
    const cut = ('Smile '.length + 1) * 2;
    await send({ source_addr: PHONE, destination_addr: SHORT_CODE, data_coding: 8, short_message: hex(octets.subarray(cut)), sar: [777, 2, 2] });
    await send({ source_addr: PHONE, destination_addr: SHORT_CODE, data_coding: 8, short_message: hex(octets.subarray(0, cut)), sar: [777, 2, 1] });
    await waitFor(() => r.messages().length === 1, 'the whole message');
    expect(r.messages()[0]?.text).toBe(text);
    expect(r.messages()[0]?.text.codePointAt(6)).toBe(0x1f600);
  });

  it('reads a long text from message_payload when short_message is empty', async () => {
    await start();
    const r = rig as InboundRig;
    const text = `${'All in one payload. '.repeat(20)}End`;
    await send({ source_addr: PHONE, destination_addr: SHORT_CODE, short_message: '', message_payload: hex(gsm(text)) });
    await waitFor(() => r.messages().length === 1, 'the message');
    expect(r.messages()[0]?.text).toBe(text);
    expect(text.length).toBeGreaterThan(255);
  });

  it('shows 8-bit data as upper-case hex', async () => {
    await start();
    const r = rig as InboundRig;
    await send({ source_addr: PHONE, destination_addr: SHORT_CODE, data_coding: 4, short_message: '0102feff' });
    await waitFor(() => r.messages().length === 1, 'the message');
    expect(r.messages()[0]?.text).toBe('0102FEFF');
  });

  it('keeps part 1 across a reconnect and ignores it when the SMSC sends it again', async () => {
    await start();
    const r = rig as InboundRig;
    const udh = (sequence: number): Uint8Array => buildUdh([concatIe(9, 2, sequence, 8)]);
    await send({ source_addr: PHONE, destination_addr: SHORT_CODE, esm_class: UDHI, short_message: hex(udh(1), gsm('before the ')) });
    await acks(1);
    await (transport as SmppTransport).stop(1_000);
    transport = await startTransport();
    // An SMSC that saw no deliver_sm_resp sends the part again after a rebind.
    await send({ source_addr: PHONE, destination_addr: SHORT_CODE, esm_class: UDHI, short_message: hex(udh(1), gsm('before the ')) });
    await send({ source_addr: PHONE, destination_addr: SHORT_CODE, esm_class: UDHI, short_message: hex(udh(2), gsm('reconnect')) });
    await waitFor(() => r.messages().length === 1, 'the whole message');
    expect(r.messages().map((m) => m.text)).toEqual(['before the reconnect']);
    expect(r.partsLeft()).toBe(0);
  });
});

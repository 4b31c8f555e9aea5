/**
 * InboundService on a real SQLite file: parts stored as they arrive, joined once complete, kept
 * across a restart (a new store and service on the same file), and an incomplete message
 * delivered as what arrived after 10 minutes (injected clock, sweep called as the timer would).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { assembleParts } from '../../src/inbound/assemble.js';
import { INBOUND_REASSEMBLY_TIMEOUT_MS } from '../../src/inbound/inbound-service.js';
import type { InboundMessage } from '../../src/transports/transport.js';
import { inboundRig, type InboundRig } from './inbound-fixture.js';

let rig: InboundRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

function part(sequence: number, total: number, text: string, reference = 5): InboundMessage {
  return { from: '+353861234567', to: '0871112222', text, receivedAt: new Date().toISOString(), raw: `raw${sequence}`, concat: { scheme: 'udh8', reference, total, sequence } };
}

describe('InboundService', () => {
  it('stores parts as they arrive and makes the whole message once, with normalised numbers', async () => {
    rig = await inboundRig();
    expect(await rig.service.receive('sim', part(2, 2, 'world'))).toEqual({ kind: 'part-stored', stored: 1, total: 2 });
    expect(await rig.service.receive('sim', part(2, 2, 'world'))).toEqual({ kind: 'part-repeated' });
    const outcome = await rig.service.receive('sim', part(1, 2, 'hello '));
    expect(outcome).toMatchObject({ kind: 'message', clientId: null, incomplete: false });
    expect(rig.messages()).toMatchObject([{ sender: '353861234567', recipient: '353871112222', text: 'hello world', raw: 'raw1\nraw2', incomplete: 0, client_id: null }]);
    expect(rig.partsLeft()).toBe(0);
  });

  it('keeps stored parts across a restart and completes the message afterwards', async () => {
    rig = await inboundRig();
    await rig.service.receive('sim', part(1, 3, 'one '));
    await rig.service.receive('sim', part(3, 3, 'three'));
    await rig.reopen();
    expect(rig.partsLeft()).toBe(2);
    await rig.service.receive('sim', part(2, 3, 'two '));
    expect(rig.messages().map((m) => m.text)).toEqual(['one two three']);
  });

  it('delivers an incomplete message as what arrived after 10 minutes, flagged, and not before', async () => {
    rig = await inboundRig();
    expect(INBOUND_REASSEMBLY_TIMEOUT_MS).toBe(600_000);
    await rig.service.receive('sim', part(1, 3, 'first '));
    rig.clock.nowMs += 60_000;
    await rig.service.receive('sim', part(3, 3, 'third'));
    rig.clock.nowMs += INBOUND_REASSEMBLY_TIMEOUT_MS - 60_001;
    expect(await rig.service.sweep()).toBe(0);
    expect(rig.messages()).toEqual([]);
    rig.clock.nowMs += 1;
    expect(await rig.service.sweep()).toBe(1);
    expect(rig.messages()).toMatchObject([{ text: 'first third', incomplete: 1 }]);
    expect(rig.partsLeft()).toBe(0);
  });

  it('sweeps parts left overdue by an earlier run when it starts', async () => {
    rig = await inboundRig();
    await rig.service.receive('sim', part(1, 2, 'lonely'));
    await rig.reopen();
    rig.clock.nowMs += INBOUND_REASSEMBLY_TIMEOUT_MS;
    await rig.service.start();
    await rig.service.sweep();
    rig.service.stop();
    expect(rig.messages()).toMatchObject([{ text: 'lonely', incomplete: 1 }]);
  });

  it('keeps two messages with the same reference from different senders apart', async () => {
    rig = await inboundRig();
    await rig.service.receive('sim', part(1, 2, 'a1'));
    await rig.service.receive('sim', { ...part(1, 2, 'b1'), from: '447700900123' });
    await rig.service.receive('sim', { ...part(2, 2, 'b2'), from: '447700900123' });
    await rig.service.receive('sim', part(2, 2, 'a2'));
    expect(rig.messages().map((m) => [m.sender, m.text])).toEqual([['447700900123', 'b1b2'], ['353861234567', 'a1a2']]);
  });
});

describe('assembleParts', () => {
  it('decodes UCS-2 parts joined as octets, keeping a surrogate pair split between parts', () => {
    // "a😀b": 0061 D83D DE00 0062, cut after D83D.
    const joined = assembleParts([{ sequence: 2, coding: 'ucs2', body: 'DE000062' }, { sequence: 1, coding: 'ucs2', body: '0061D83D' }], 2);
    expect(joined).toEqual({ text: 'a\u{1F600}b', missing: [] });
  });

  it('joins an SMSC cut at an odd octet', () => {
    expect(assembleParts([{ sequence: 1, coding: 'ucs2', body: '0061D8' }, { sequence: 2, coding: 'ucs2', body: '3DDE00' }], 2).text).toBe('a\u{1F600}');
  });

  it('shows a dangling half code unit before a missing part as U+FFFD and names the missing part', () => {
    expect(assembleParts([{ sequence: 1, coding: 'ucs2', body: '006100' }], 2)).toEqual({ text: 'a\uFFFD', missing: [2] });
  });

  it('shows 8-bit data as upper-case hex of the joined octets', () => {
    expect(assembleParts([{ sequence: 1, coding: 'binary', body: '0a0b' }, { sequence: 2, coding: 'binary', body: 'ff' }], 2).text).toBe('0A0BFF');
  });
});

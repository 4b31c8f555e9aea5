import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { normalizeMessageId } from '../../../src/receipts/index.js';
import { outbound, startRig, type Rig } from './helpers.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('SmppTransport submit', () => {
  it('binds as transceiver with SMPP 3.4 and the configured system_type', async () => {
    rig = await startRig({}, { systemType: 'smsgate' });
    expect(rig.transport.currentState()).toEqual({ state: 'bound', detail: '1/1 binds bound' });
    expect(rig.smsc.bindAttempts).toEqual([
      expect.objectContaining({ command: 'bind_transceiver', systemId: 'esme', systemType: 'smsgate', interfaceVersion: 0x34, accepted: true }),
    ]);
  });

  it('binds a transmitter and a receiver per bind in transmitter-receiver mode', async () => {
    rig = await startRig({}, { bindMode: 'transmitter-receiver', binds: 2 });
    expect(rig.smsc.boundSessions().map((session) => session.bindCommand).sort()).toEqual([
      'bind_receiver', 'bind_receiver', 'bind_transmitter', 'bind_transmitter',
    ]);
    const outcomes = await rig.transport.submit(outbound('hello'));
    expect(outcomes).toEqual([{ part: 1, kind: 'accepted', messageId: expect.any(String) }]);
    const sent = rig.smsc.submits[0]!;
    const session = rig.smsc.boundSessions().find((candidate) => candidate.id === sent.sessionId);
    expect(session?.bindCommand).toBe('bind_transmitter');
  });

  it('sends a single GSM-7 part as unpacked septets with data_coding 0 and the sender TON/NPI', async () => {
    rig = await startRig();
    const outcomes = await rig.transport.submit(outbound('Hi @ £5 {x}'));
    expect(outcomes).toEqual([{ part: 1, kind: 'accepted', messageId: normalizeMessageId(rig.smsc.submits[0]!.messageId!) }]);
    const wire = rig.smsc.submits[0]!.wire;
    expect(wire.data_coding).toBe(0);
    expect(wire.esm_class).toBe(0);
    expect(wire.source_addr).toBe('smsgate');
    expect([wire.source_addr_ton, wire.source_addr_npi]).toEqual([5, 0]);
    expect([wire.dest_addr_ton, wire.dest_addr_npi, wire.destination_addr]).toEqual([1, 1, '353871234567']);
    expect(wire.registered_delivery).toBe(1);
    // 3GPP TS 23.038 §6.2.1: H i SP @(0x00) SP £(0x01) 5 SP ESC ( x ESC )
    expect(wire.short_message.toString('hex')).toBe('48692000200135201b2878' + '1b29');
  });

  it('applies validity period, priority and source TON/NPI overrides', async () => {
    rig = await startRig({}, { validityPeriod: '000001000000000R', priority: 2, sourceTon: 1, sourceNpi: 1, registeredDelivery: 0 });
    await rig.transport.submit(outbound('x'));
    const wire = rig.smsc.submits[0]!.wire;
    expect(wire.validity_period).toBe('000001000000000R');
    expect(wire.priority_flag).toBe(2);
    expect([wire.source_addr_ton, wire.source_addr_npi]).toEqual([1, 1]);
    expect(wire.registered_delivery).toBe(0);
  });

  it('fails a part permanently with the command_status name (ESME_RINVDSTADR)', async () => {
    rig = await startRig({ onSubmit: () => ({ kind: 'status', commandStatus: 0x0b }) });
    expect(await rig.transport.submit(outbound('x'))).toEqual([
      { part: 1, kind: 'permanent', status: 'ESME_RINVDSTADR', errorCode: 0x0b },
    ]);
  });

  it('fails a part temporarily on ESME_RSYSERR', async () => {
    rig = await startRig({ onSubmit: () => ({ kind: 'status', commandStatus: 0x08 }) });
    expect(await rig.transport.submit(outbound('x'))).toEqual([
      { part: 1, kind: 'temporary', status: 'ESME_RSYSERR', errorCode: 0x08 },
    ]);
  });

  it('returns temporary RESPONSE_TIMEOUT when no submit_sm_resp comes', async () => {
    rig = await startRig({ onSubmit: () => ({ kind: 'never' }) }, { responseTimeoutMs: 500 });
    expect(await rig.transport.submit(outbound('x'))).toEqual([{ part: 1, kind: 'temporary', status: 'RESPONSE_TIMEOUT' }]);
  });

  it('returns TRANSPORT_DOWN without touching the network while no bind is up', async () => {
    rig = await startRig({}, { password: 'wrong' });
    expect(await rig.transport.submit(outbound('x'))).toEqual([{ part: 1, kind: 'not-sent', reason: 'TRANSPORT_DOWN' }]);
    expect(rig.smsc.pdus('submit_sm')).toHaveLength(0);
  });

  it('matches ids in hex as the SMSC gave them', async () => {
    rig = await startRig({ idFormat: 'hex' });
    const [outcome] = await rig.transport.submit(outbound('x'));
    expect(outcome).toEqual({ part: 1, kind: 'accepted', messageId: rig.smsc.submits[0]!.messageId });
    expect(rig.smsc.submits[0]!.messageId).toMatch(/^[0-9A-F]+$/);
  });
});

describe('SmppTransport over TLS', () => {
  it('binds and submits over TLS when tls is set', async () => {
    const fixtures = new URL('./fixtures/', import.meta.url);
    const tls = {
      key: readFileSync(new URL('smsc-key.pem', fixtures), 'utf8'),
      cert: readFileSync(new URL('smsc-cert.pem', fixtures), 'utf8'),
    };
    // The fixture certificate is self-signed, so verification is turned off for this test only.
    rig = await startRig({ tls }, { tls: true, tlsRejectUnauthorized: false });
    expect(rig.transport.currentState().state).toBe('bound');
    expect((await rig.transport.submit(outbound('over TLS')))[0]?.kind).toBe('accepted');
    expect(rig.smsc.submits[0]!.wire.short_message.length).toBe(8);
  });

  it('refuses an unverifiable certificate by default', async () => {
    const fixtures = new URL('./fixtures/', import.meta.url);
    const tls = {
      key: readFileSync(new URL('smsc-key.pem', fixtures), 'utf8'),
      cert: readFileSync(new URL('smsc-cert.pem', fixtures), 'utf8'),
    };
    rig = await startRig({ tls }, { tls: true });
    const state = rig.transport.currentState();
    expect(state.state).toBe('down');
    expect(state.state === 'down' && state.reason).toMatch(/self[- ]signed/i);
  });
});

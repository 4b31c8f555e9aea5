/**
 * Engine conformance: what arrives that is not a receipt, on both backends. A mobile-originated
 * message is stored in inbound_messages (handed over by a transport, and over real SMPP); a PDU
 * the modem path cannot decode is stored in undecodable_pdus before the modem deletes it from the
 * SIM (modem emulator on a socat pty).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ModemTransport } from '../../../src/transports/modem/index.js';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { ModemEmulator, buildDeliverPdu } from '../../support/modem-emulator/index.js';
import { TestSmsc } from '../../support/smsc/test-smsc.js';
import { smppConfig } from '../../transports/smpp/helpers.js';
import { ScriptedTransport } from '../scripted-transport.js';
import { describeEngineConformance, until } from './engine-backends.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describeEngineConformance('engine inbound', (open) => {
  it('stores an inbound (mobile-originated) message in inbound_messages, stamped when stored', async () => {
    const rig = await open();
    const transport = new ScriptedTransport();
    await rig.startEngine({ transports: [transport] });
    const beforeMs = Date.now();
    await transport.handlers!.onInbound({ from: '353871234567', to: '50123', text: 'STOP', receivedAt: '2026-11-21T10:00:00.000Z', raw: '0791...' });
    const afterMs = Date.now();
    const rows = await rig.inbound();
    expect(rows).toEqual([
      { transport: 'scripted', sender: '353871234567', recipient: '50123', text: 'STOP', raw: '0791...', received_at: expect.any(Number), client_id: null, incomplete: 0 },
    ]);
    // ReceivedAt is when smsgate stored it (the keyset of GET /v1/inbound), not the network's stamp.
    expect(rows[0]!.received_at).toBeGreaterThanOrEqual(beforeMs);
    expect(rows[0]!.received_at).toBeLessThanOrEqual(afterMs);
  });

  it('stores a mobile-originated message that arrives over SMPP', async () => {
    const rig = await open();
    const smsc = await TestSmsc.start({});
    cleanups.push(() => smsc.stop());
    await rig.startEngine({ transports: [new SmppTransport(smppConfig(smsc))] });
    await until(async () => smsc.boundSessions().length, (n) => n === 1);
    await smsc.sendDeliverSm({ source_addr: '353871111111', destination_addr: '50123', data_coding: 0, short_message: 'hello gateway' });
    const stored = await until(() => rig.inbound(), (rows) => rows.length === 1);
    expect(stored.map((r) => [r.transport, r.sender, r.recipient, r.text])).toEqual([['carrier', '353871111111', '50123', 'hello gateway']]);
  });

  it('stores a PDU the modem cannot decode, then the modem deletes it from the SIM', async () => {
    const rig = await open();
    const dir = mkdtempSync(join(tmpdir(), 'smsgate-undecodable-'));
    const emulator = new ModemEmulator({ dir, name: 'sim0', statusReports: false });
    cleanups.push(async () => {
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    });
    await emulator.plugIn();
    const transport = new ModemTransport(
      { name: 'modems', type: 'modem', devices: [{ path: emulator.path, messagesPerMinute: 6000 }], reopenBackoffMs: [100, 200], healthIntervalMs: 60_000, registrationTimeoutMs: 5_000 },
      { registrationPollMs: 50 },
    );
    // The engine stops (and stops its transport) after the test, before the emulator closes.
    await rig.startEngine({ transports: [transport] });
    // Two octets short of its user data: PDU_TRUNCATED.
    const hex = buildDeliverPdu({ smsc: '353870000000', from: '353861234567', text: 'cut short', at: new Date() }).hex.slice(0, -4);
    const index = emulator.storeRawPdu(hex, hex.length / 2 - 8, '+CMTI');
    await until(async () => emulator.storedCount, (n) => n === 0);
    expect(await rig.undecodablePdus()).toEqual([{ transport: 'modems', device: 'sim0', hex, reason_code: 'PDU_TRUNCATED' }]);
    expect(emulator.deleted).toEqual([index]);
    expect(emulator.protocolErrors).toEqual([]);
    expect(await rig.inbound()).toEqual([]);
  });
});

/**
 * Stored messages read back from the SIM (AT+CMGR after +CDSI / +CMTI) over a socat pty to the
 * modem emulator: a status report followed by SIM record fill still becomes its receipt, and a
 * PDU that cannot be decoded is stored with its hex and reason before it is deleted, never
 * deleted unrecorded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planMessage } from '../../../src/sms/index.js';
import { ModemTransport } from '../../../src/transports/modem/index.js';
import type { OutboundMessage, TransportHandlers, TransportReceipt, UndecodablePdu } from '../../../src/transports/transport.js';
import { startEngineHarness, waitFor, type EngineHarness } from '../../engine/engine-harness.js';
import { ModemEmulator, buildDeliverPdu, buildStatusReportPdu } from '../../support/modem-emulator/index.js';
import { SIM_RECORD_TPDU_OCTETS, withSimRecordFill } from '../../support/modem-emulator/pdu-builders.js';

let dir: string;
let emulator: ModemEmulator;
let transport: ModemTransport | undefined;
let harness: EngineHarness | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-sim-records-'));
  // No automatic reports: each test stores the report it needs.
  emulator = new ModemEmulator({ dir, name: 'sim0', statusReports: false });
  await emulator.plugIn();
});

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await transport?.stop(500);
  transport = undefined;
  expect(emulator.protocolErrors).toEqual([]);
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

function modemTransport(): ModemTransport {
  transport = new ModemTransport(
    { name: 'modems', type: 'modem', devices: [{ path: emulator.path, messagesPerMinute: 6000 }], reopenBackoffMs: [100, 200], healthIntervalMs: 60_000, registrationTimeoutMs: 5_000 },
    { registrationPollMs: 50 },
  );
  return transport;
}

interface Recorded extends TransportHandlers {
  receipts: TransportReceipt[];
  undecodable: UndecodablePdu[];
  refuseUndecodable: boolean;
}

function recorder(): Recorded {
  const rec: Recorded = {
    receipts: [],
    undecodable: [],
    refuseUndecodable: false,
    onReceipt: async (receipt) => {
      rec.receipts.push(receipt);
    },
    onInbound: async () => undefined,
    onUndecodable: async (pdu) => {
      if (rec.refuseUndecodable) throw new Error('store unavailable');
      rec.undecodable.push(pdu);
    },
    onState: () => undefined,
  };
  return rec;
}

function message(text: string, destination = '353871234567'): OutboundMessage {
  const plan = planMessage(text);
  return { messageKey: 'k1', destination, sender: { value: 'Test', kind: 'alphanumeric', ton: 5, npi: 0 }, encoding: plan.encoding, segments: plan.segments, concatReference: 7 };
}

async function until(check: () => boolean, what: string, maxMs = 10_000): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** An SMS-DELIVER cut inside its user data: TP-UDL promises more septets than follow (PDU_TRUNCATED). */
function truncatedDeliver(): string {
  const whole = buildDeliverPdu({ smsc: '353870000000', from: '353861234567', text: 'cut short', at: new Date() });
  return whole.hex.slice(0, -4);
}

describe('status reports read from a SIM record with its FF fill', () => {
  it('turns the stored report into the part\'s DELIVRD receipt and then deletes it', async () => {
    const t = modemTransport();
    const handlers = recorder();
    t.setHandlers(handlers);
    await t.start();
    const [outcome] = await t.submit(message('report me'));
    if (outcome?.kind !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
    const sent = emulator.received[0]!;
    const report = buildStatusReportPdu({
      smsc: '353870000000', messageReference: sent.messageReference, recipient: '353871234567', submittedAt: new Date(), dischargedAt: new Date(), status: 0x00,
    });
    emulator.storeRawPdu(withSimRecordFill(report), SIM_RECORD_TPDU_OCTETS, '+CDSI');
    await until(() => handlers.receipts.length === 1 && emulator.storedCount === 0, 'receipt and deletion');
    expect(handlers.receipts[0]).toMatchObject({ messageId: outcome.messageId, status: 'DELIVRD', final: true });
    expect(handlers.undecodable).toEqual([]);
  });
});

describe('a PDU the modem path cannot decode', () => {
  it('is handed to onUndecodable with its hex and reason, then deleted from the SIM', async () => {
    const t = modemTransport();
    const handlers = recorder();
    t.setHandlers(handlers);
    await t.start();
    const hex = truncatedDeliver();
    const index = emulator.storeRawPdu(hex, hex.length / 2 - 8, '+CMTI');
    await until(() => handlers.undecodable.length === 1 && emulator.storedCount === 0, 'record and deletion');
    expect(handlers.undecodable[0]).toMatchObject({ device: 'sim0', hex, reasonCode: 'PDU_TRUNCATED' });
    expect(emulator.deleted).toEqual([index]);
  });

  it('stays on the SIM when it could not be recorded', async () => {
    const t = modemTransport();
    const handlers = recorder();
    handlers.refuseUndecodable = true;
    let inbound = 0;
    t.setHandlers({ ...handlers, onInbound: async () => void inbound++ });
    await t.start();
    const hex = truncatedDeliver();
    emulator.storeRawPdu(hex, hex.length / 2 - 8, '+CMTI');
    // A readable message stored after it: the session handles stored messages one command at a
    // time, so once this one is deleted any AT+CMGD for the first would already have been sent.
    const readable = buildDeliverPdu({ smsc: '353870000000', from: '353861234567', text: 'readable', at: new Date() });
    emulator.storeRawPdu(readable.hex, readable.tpduOctets, '+CMTI');
    await until(() => inbound === 1 && emulator.deleted.length === 1, 'the readable message handled');
    expect(emulator.deleted).toEqual([2]);
    expect(emulator.storedCount).toBe(1);
  });

  it('lands in undecodable_pdus through the dispatch engine before the SIM copy is deleted', async () => {
    harness = await startEngineHarness({ transports: [modemTransport()] });
    transport = undefined; // the harness stops it
    const hex = truncatedDeliver();
    emulator.storeRawPdu(hex, hex.length / 2 - 8, '+CMTI');
    const rows = await waitFor(
      () => harness!.store.db.prepare('SELECT transport, device, hex, reason_code, reason FROM undecodable_pdus').all() as Record<string, string>[],
      (found) => found.length === 1,
    );
    expect(rows[0]).toMatchObject({ transport: 'modems', device: 'sim0', hex, reason_code: 'PDU_TRUNCATED' });
    expect(rows[0]!['reason']).toMatch(/TP-UD/);
    await until(() => emulator.storedCount === 0, 'deletion');
  });
});

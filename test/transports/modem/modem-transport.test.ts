import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planMessage } from '../../../src/sms/index.js';
import { ModemTransport } from '../../../src/transports/modem/index.js';
import type { ModemTransportConfig } from '../../../src/transports/modem/index.js';
import type { InboundMessage, OutboundMessage, TransportReceipt, TransportState } from '../../../src/transports/transport.js';
import { ModemEmulator, type EmulatorOptions } from '../../support/modem-emulator/index.js';

let dir: string;
const emulators: ModemEmulator[] = [];
const transports: ModemTransport[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-modem-'));
});

afterEach(async () => {
  for (const t of transports.splice(0)) await t.stop(500);
  for (const e of emulators.splice(0)) {
    expect(e.protocolErrors).toEqual([]);
    await e.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

async function emulator(name: string, options: Partial<EmulatorOptions> = {}): Promise<ModemEmulator> {
  const emu = new ModemEmulator({ dir, name, ...options });
  await emu.plugIn();
  emulators.push(emu);
  return emu;
}

interface Recorded {
  receipts: TransportReceipt[];
  inbound: InboundMessage[];
  states: TransportState[];
}

async function transport(devices: ModemTransportConfig['devices'], extra: Partial<ModemTransportConfig> = {}): Promise<{ transport: ModemTransport } & Recorded> {
  const t = new ModemTransport(
    { name: 'modems', type: 'modem', devices, reopenBackoffMs: [100, 200], retryDelayMs: 10, healthIntervalMs: 60_000, registrationTimeoutMs: 5_000, ...extra },
    { registrationPollMs: 50 },
  );
  const recorded: Recorded = { receipts: [], inbound: [], states: [] };
  t.setHandlers({
    onReceipt: async (r) => {
      recorded.receipts.push(r);
    },
    onInbound: async (m) => {
      recorded.inbound.push(m);
    },
    onState: (s) => recorded.states.push(s),
  });
  transports.push(t);
  await t.start();
  return { transport: t, ...recorded };
}

function message(text: string, destination = '353871234567', key = 'm1'): OutboundMessage {
  const plan = planMessage(text);
  return {
    messageKey: key,
    destination,
    sender: { value: 'Test', kind: 'alphanumeric', ton: 5, npi: 0 },
    encoding: plan.encoding,
    segments: plan.segments,
    concatReference: 0x2a,
  };
}

async function until(check: () => boolean, what: string, maxMs = 10_000): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('ModemTransport against the emulated modem over a socat pty', () => {
  it('initialises, sends a one-part message and turns the +CDS status report into a DELIVRD receipt', async () => {
    const emu = await emulator('m0');
    const t = await transport([{ path: emu.path }]);
    expect(t.transport.currentState()).toEqual({ state: 'bound', detail: '1/1 devices ready' });
    const outcomes = await t.transport.submit(message('hello from smsgate'));
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ part: 1, kind: 'accepted' });
    const messageId = outcomes[0]?.kind === 'accepted' ? outcomes[0].messageId : '';
    expect(messageId).toMatch(/^m0-[0-9a-f-]{36}$/);
    expect(emu.received).toHaveLength(1);
    expect(emu.received[0]?.pdu.destination.digits).toBe('353871234567');
    expect(emu.received[0]?.pdu.statusReportRequest).toBe(true);
    expect(emu.received[0]?.pdu.userData.text).toBe('hello from smsgate');
    await until(() => t.receipts.length === 1, 'receipt');
    expect(t.receipts[0]).toMatchObject({ messageId, status: 'DELIVRD', final: true, errorCode: '0' });
    expect(emu.commands).toEqual(expect.arrayContaining(['ATE0', 'AT+CMEE=1', 'AT+CPIN?', 'AT+CREG?', 'AT+CMGF=0', 'AT+CNMI=2,1,0,1,0']));
  });
});

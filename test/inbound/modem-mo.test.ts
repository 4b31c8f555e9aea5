/**
 * Mobile-originated SMS from the modem emulator on a socat pty, through ModemTransport into the
 * InboundService on a real SQLite file: +CMTI naming ME storage (read after AT+CPMS="ME"), a
 * concatenated UCS-2 message with an emoji cut between parts, and a full SIM that the gateway
 * empties (read, store, delete) so the messages the network held back still arrive.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ModemTransport } from '../../src/transports/modem/index.js';
import { ModemEmulator } from '../support/modem-emulator/index.js';
import { inboundRig, type InboundRig } from './inbound-fixture.js';

let dir: string | undefined;
let emu: ModemEmulator | undefined;
let transport: ModemTransport | undefined;
let rig: InboundRig | undefined;

afterEach(async () => {
  await transport?.stop(500);
  await emu?.close();
  await rig?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  transport = undefined;
  emu = undefined;
  rig = undefined;
  dir = undefined;
});

async function until(check: () => boolean, what: string, maxMs = 15_000): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function setUp(options: { storageCapacity?: number } = {}): Promise<{ emu: ModemEmulator; rig: InboundRig }> {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-modem-mo-'));
  rig = await inboundRig();
  emu = new ModemEmulator({ dir, name: 'm0', ...options });
  await emu.plugIn();
  return { emu, rig };
}

async function startTransport(): Promise<ModemTransport> {
  const r = rig as InboundRig;
  const e = emu as ModemEmulator;
  transport = new ModemTransport(
    { name: 'modems', type: 'modem', devices: [{ path: e.path, number: '+353871110000', messagesPerMinute: 6000 }], reopenBackoffMs: [100, 200], retryDelayMs: 10, healthIntervalMs: 60_000, registrationTimeoutMs: 5_000 },
    { registrationPollMs: 50 },
  );
  transport.setHandlers({
    onReceipt: async () => undefined,
    onInbound: async (message) => {
      await await r.service.receive('modems', message);
    },
    onState: () => undefined,
  });
  await transport.start();
  return transport;
}

describe('modem MO through the emulator on a pty', () => {
  it('reads a message announced by +CMTI in ME storage after selecting ME with AT+CPMS, and deletes it there', async () => {
    const { emu, rig } = await setUp();
    await startTransport();
    await until(() => emu.commands.some((c) => c.startsWith('AT+CNMI')), 'the modem set up');
    emu.injectInbound('353861234567', 'Stored in the phone memory', undefined, { storage: 'ME' });
    await until(() => rig.messages().length === 1 && emu.storedIn('ME') === 0, 'the message stored and deleted from ME');
    expect(rig.messages()[0]).toMatchObject({ sender: '353861234567', recipient: '353871110000', text: 'Stored in the phone memory', transport: 'modems' });
    const cpms = emu.commands.indexOf('AT+CPMS="ME"');
    expect(cpms).toBeGreaterThan(-1);
    expect(emu.commands.slice(cpms).find((c) => c.startsWith('AT+CMGL') || c.startsWith('AT+CMGR'))).toBeDefined();
  });

  it('joins UCS-2 parts with an emoji cut between them into one message', async () => {
    const { emu, rig } = await setUp();
    await startTransport();
    await until(() => emu.commands.some((c) => c.startsWith('AT+CNMI')), 'the modem set up');
    emu.injectInbound('353861234567', '\uDE00 bye', { reference: 3, total: 2, sequence: 2 });
    emu.injectInbound('353861234567', 'Hi \uD83D', { reference: 3, total: 2, sequence: 1 });
    // Each part is deleted from the SIM once stored (the last one just after the message is made).
    await until(() => rig.messages().length === 1 && emu.storedCount === 0, 'the whole message and both deletions');
    expect(rig.messages()[0]?.text).toBe('Hi \u{1F600} bye');
  });

  it('empties a full SIM at start so the messages the network held back arrive too, none lost', async () => {
    const { emu, rig } = await setUp({ storageCapacity: 3 });
    // Received while the gateway was down: the SIM fills at 3, the network holds the other 2.
    for (let i = 1; i <= 5; i++) emu.injectInbound('353861234567', `message ${i}`);
    expect(emu.storedCount).toBe(3);
    expect(emu.heldCount).toBe(2);
    await startTransport();
    await until(() => rig.messages().length === 5, 'all five messages');
    expect(rig.messages().map((m) => m.text).sort()).toEqual(['message 1', 'message 2', 'message 3', 'message 4', 'message 5']);
    await until(() => emu.storedCount === 0 && emu.heldCount === 0, 'an empty SIM');
  });
});

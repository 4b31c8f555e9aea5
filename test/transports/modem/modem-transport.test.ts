import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planMessage } from '../../../src/sms/index.js';
import { ModemTransport, defaultProfilesDir, probeModem } from '../../../src/transports/modem/index.js';
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

/** A profiles directory with the shipped profiles plus 'test-*' variants of generic. */
function profilesDir(variants: Record<string, Record<string, unknown>> = {}): string {
  const target = join(dir, 'hardware');
  mkdirSync(target, { recursive: true });
  for (const name of ['generic', 'huawei-e3372']) copyFileSync(join(defaultProfilesDir(), `${name}.json`), join(target, `${name}.json`));
  const generic = JSON.parse(readFileSync(join(defaultProfilesDir(), 'generic.json'), 'utf8')) as Record<string, unknown>;
  for (const [name, changes] of Object.entries(variants)) writeFileSync(join(target, `${name}.json`), JSON.stringify({ ...generic, name, ...changes }));
  return target;
}

async function transport(
  devices: ModemTransportConfig['devices'],
  extra: Partial<ModemTransportConfig> = {},
  logDestination?: NodeJS.WritableStream,
): Promise<{ transport: ModemTransport } & Recorded> {
  const t = new ModemTransport(
    { name: 'modems', type: 'modem', devices: devices.map((d) => ({ messagesPerMinute: 6000, ...d })), reopenBackoffMs: [100, 200], retryDelayMs: 10, healthIntervalMs: 60_000, registrationTimeoutMs: 5_000, ...extra },
    { registrationPollMs: 50, ...(logDestination ? { logger: pino({ level: 'debug' }, logDestination) } : {}) },
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

  it('sends a three-part message as three concatenated PDUs and gets a receipt for each part', async () => {
    const emu = await emulator('m0');
    const t = await transport([{ path: emu.path }]);
    const text = 'Long message. '.repeat(25);
    const outcomes = await t.transport.submit(message(text));
    expect(outcomes.map((o) => o.kind)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(emu.received.map((r) => r.pdu.userData.concat)).toEqual([1, 2, 3].map((sequence) => ({ reference: 0x2a, referenceBits: 8, total: 3, sequence })));
    expect(emu.received.map((r) => r.pdu.userData.text).join('')).toBe(planMessage(text).text);
    await until(() => t.receipts.length === 3, 'three receipts');
    const ids = outcomes.map((o) => (o.kind === 'accepted' ? o.messageId : ''));
    expect(new Set(t.receipts.map((r) => r.messageId))).toEqual(new Set(ids));
  });

  it('sends only the requested part numbers on a retry, keeping the part number and total', async () => {
    const emu = await emulator('m0');
    const t = await transport([{ path: emu.path }]);
    const outcomes = await t.transport.submit({ ...message('Long message. '.repeat(25)), partNumbers: [2] });
    expect(outcomes).toEqual([expect.objectContaining({ part: 2, kind: 'accepted' })]);
    expect(emu.received.map((r) => r.pdu.userData.concat)).toEqual([{ reference: 0x2a, referenceBits: 8, total: 3, sequence: 2 }]);
  });

  it('comes up on a minimal modem that refuses +CMEE, +CPIN?, +CREG?, +CSMS, +CPMS and +CNMI, and reads +CMGS: <mr>,<scts>', async () => {
    const emu = await emulator('m0', {
      refuseCommands: ['AT+CMEE', 'AT+CPIN?', 'AT+CREG?', 'AT+CSMS', 'AT+CPMS', 'AT+CNMI'],
      cmgsSuffix: ',"26/11/21,10:00:00+00"',
    });
    const t = await transport([{ path: emu.path }]);
    expect(t.transport.currentState().state).toBe('bound');
    expect((await t.transport.submit(message('minimal modem')))[0]?.kind).toBe('accepted');
  });

  it('waits for a slow network registration before sending', async () => {
    const emu = await emulator('m0', { timing: { registrationDelayMs: 400 } });
    const t = await transport([{ path: emu.path }]);
    expect(t.transport.currentState().state).toBe('bound');
    expect(emu.commands.filter((c) => c === 'AT+CREG?').length).toBeGreaterThan(1);
    expect((await t.transport.submit(message('registered now')))[0]?.kind).toBe('accepted');
  });

  it('reads stored status reports announced by +CDSI with AT+CMGR, then deletes them with AT+CMGD (huawei-e3372 profile)', async () => {
    const emu = await emulator('m0');
    const t = await transport([{ path: emu.path, profile: 'huawei-e3372' }], { profilesDir: profilesDir() });
    expect(emu.commands).toContain('AT+CNMI=2,1,0,2,0');
    expect(emu.commands).toContain('AT^CURC=0');
    const outcomes = await t.transport.submit(message('stored report'));
    await until(() => t.receipts.length === 1, 'receipt');
    expect(t.receipts[0]?.messageId).toBe(outcomes[0]?.kind === 'accepted' ? outcomes[0].messageId : 'none');
    await until(() => emu.storedCount === 0 && emu.deleted.length === 1, 'deletion');
    expect(emu.commands).toContain('AT+CMGR=1');
  });

  it('acknowledges +CDS with AT+CNMA when the profile says the mode needs it', async () => {
    const emu = await emulator('m0');
    const t = await transport([{ path: emu.path, profile: 'test-cnma' }], { profilesDir: profilesDir({ 'test-cnma': { csms: 1, cnmaRequired: true } }) });
    await t.transport.submit(message('ack me'));
    await until(() => emu.cnmaCount === 1, 'AT+CNMA');
    expect(t.receipts).toHaveLength(1);
    expect(emu.commands).toContain('AT+CSMS=1');
  });

  it('does not acknowledge a receipt whose handler rejects', async () => {
    const emu = await emulator('m0');
    const t = await transport([{ path: emu.path, profile: 'test-cnma' }], { profilesDir: profilesDir({ 'test-cnma': { csms: 1, cnmaRequired: true } }) });
    let calls = 0;
    t.transport.setHandlers({
      onReceipt: async () => {
        calls++;
        throw new Error('database unavailable');
      },
      onInbound: async () => undefined,
      onState: () => undefined,
    });
    await t.transport.submit(message('not stored'));
    await until(() => calls === 1, 'receipt handler');
    await t.transport.submit(message('second'));
    await until(() => calls === 2, 'second receipt handler');
    expect(emu.cnmaCount).toBe(0);
  });

  it('maps an expired status report (TP-ST 0x46) to a final EXPIRED receipt', async () => {
    const emu = await emulator('m0', { reportStatus: 0x46 });
    const t = await transport([{ path: emu.path }]);
    await t.transport.submit(message('too late'));
    await until(() => t.receipts.length === 1, 'receipt');
    expect(t.receipts[0]).toMatchObject({ status: 'EXPIRED', final: true, errorCode: '70' });
  });

  it('hands incoming SMS (+CMTI) to onInbound and deletes them from the SIM afterwards', async () => {
    const emu = await emulator('m0');
    const t = await transport([{ path: emu.path }]);
    emu.injectInbound('353861234567', 'Reply STOP');
    await until(() => t.inbound.length >= 1 && emu.storedCount === 0, 'inbound and deletion');
    expect(t.inbound).toHaveLength(1);
    expect(t.inbound[0]).toMatchObject({ from: '353861234567', to: 'm0', text: 'Reply STOP' });
    expect(t.inbound[0]?.raw).toMatch(/^[0-9A-F]+$/);
  });

  it('hands each part of a concatenated incoming SMS on with its UDH reference and deletes it at once (reassembly is durable, in src/inbound)', async () => {
    const emu = await emulator('m0');
    const t = await transport([{ path: emu.path }]);
    emu.injectInbound('353861234567', 'second part, ', { reference: 7, total: 3, sequence: 2 });
    emu.injectInbound('353861234567', 'First part, ', { reference: 7, total: 3, sequence: 1 });
    await until(() => t.inbound.length === 2 && emu.storedCount === 0, 'both parts and their deletions');
    expect(t.inbound.map((m) => [m.text, m.concat])).toEqual([
      ['second part, ', { scheme: 'udh8', reference: 7, total: 3, sequence: 2 }],
      ['First part, ', { scheme: 'udh8', reference: 7, total: 3, sequence: 1 }],
    ]);
  });

  it('unlocks the SIM with the configured PIN and never logs it', async () => {
    const emu = await emulator('m0', { pin: '4711' });
    let logged = '';
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logged += chunk.toString();
        done();
      },
    });
    const t = await transport([{ path: emu.path, pin: '4711' }], {}, sink);
    expect(t.transport.currentState().state).toBe('bound');
    expect(emu.commands).toContain('AT+CPIN="4711"');
    expect(logged).toContain('AT+CPIN=[redacted]');
    expect(logged).not.toContain('4711');
  });

  it('never tries a refused PIN a second time (three wrong tries would lock the SIM)', async () => {
    const emu = await emulator('m0', { pin: '4711' });
    const t = await transport([{ path: emu.path, pin: '0000' }]);
    await until(() => emu.commands.filter((c) => c === 'AT+CPIN?').length >= 3, 'two reopen attempts');
    expect(emu.commands.filter((c) => c.startsWith('AT+CPIN='))).toEqual(['AT+CPIN="0000"']);
    expect(t.transport.currentState().state).not.toBe('bound');
  });

  it('stays down with MODEM_SIM_PIN_REQUIRED when the SIM wants a PIN and none is configured', async () => {
    const emu = await emulator('m0', { pin: '4711' });
    const t = await transport([{ path: emu.path }]);
    expect(t.transport.currentState().state).not.toBe('bound');
    expect(t.transport.devices()[0]?.lastError).toBe('MODEM_SIM_PIN_REQUIRED');
    expect(await t.transport.submit(message('x'))).toEqual([{ part: 1, kind: 'not-sent', reason: 'TRANSPORT_DOWN' }]);
  });

  it('probes identity whether the firmware answers bare lines or "+CGSN: ..." prefixed ones', async () => {
    for (const prefixedIdentity of [false, true]) {
      const emu = await emulator(prefixedIdentity ? 'prefixed' : 'bare', { prefixedIdentity, rssi: 99 });
      const result = await probeModem(emu.path, 'generic');
      expect(result).toMatchObject({ manufacturer: 'SMSGATE', model: 'EMULATED-MODEM', imei: '356938035643809', simState: 'READY', signal: { rssi: null, dbm: null } });
    }
  });

  it('polls health: signal, registration and operator', async () => {
    const emu = await emulator('m0', { rssi: 17, operator: 'Test Telecom', registrationStat: 5 });
    const t = await transport([{ path: emu.path }]);
    await until(() => t.transport.devices()[0]?.health !== null, 'health');
    expect(t.transport.devices()[0]?.health).toEqual({ rssi: 17, signalDbm: -79, registration: 'registered-roaming', operator: 'Test Telecom' });
  });

  it('comes back temporary RESULT_UNKNOWN for a part in flight when its modem is unplugged, then reopens it', async () => {
    const emu = await emulator('m0', { timing: { submitDelayMs: [400, 400] } });
    const t = await transport([{ path: emu.path }]);
    const pending = t.transport.submit(message('in flight'));
    await until(() => emu.commands.some((c) => c.startsWith('AT+CMGS')), 'send started');
    await new Promise((r) => setTimeout(r, 100));
    await emu.unplug();
    expect(await pending).toEqual([{ part: 1, kind: 'temporary', status: 'RESULT_UNKNOWN', retryAfterMs: 10 }]);
    await until(() => t.transport.currentState().state === 'down', 'down');
    await emu.plugIn();
    await until(() => t.transport.currentState().state === 'bound', 'reopened and initialised');
    expect((await t.transport.submit(message('after replug')))[0]?.kind).toBe('accepted');
  });

  it('moves queued parts to the other devices when one is unplugged, losing none', async () => {
    const a = await emulator('a', { timing: { submitDelayMs: [20, 40] } });
    const b = await emulator('b', { timing: { submitDelayMs: [20, 40] } });
    const t = await transport([
      { path: a.path, messagesPerMinute: 600 },
      { path: b.path, messagesPerMinute: 600 },
    ]);
    expect(t.transport.maxPerSecond).toBe(20);
    const submits = Array.from({ length: 12 }, (_, i) => t.transport.submit(message(`message ${i}`, `35387000${String(i).padStart(4, '0')}`, `k${i}`)));
    await until(() => a.received.length >= 2, 'a few sends on a');
    await a.unplug();
    const outcomes = (await Promise.all(submits)).flat();
    expect(outcomes).toHaveLength(12);
    const accepted = outcomes.filter((o) => o.kind === 'accepted').length;
    const unknown = outcomes.filter((o) => o.kind === 'temporary' && o.status === 'RESULT_UNKNOWN').length;
    expect(accepted + unknown).toBe(12);
    expect(unknown).toBeLessThanOrEqual(1);
    expect(a.received.length + b.received.length).toBeGreaterThanOrEqual(accepted);
    expect(b.received.length).toBeGreaterThan(0);
  });

  it('hands a part to another modem when the PDU was never written, within one submit (no attempt spent)', async () => {
    // m0 takes the part and never gives the '> ' prompt; m1 is not plugged in yet, so m0 has it.
    const m0 = await emulator('m0');
    m0.dropNextPrompts(1);
    const m1 = new ModemEmulator({ dir, name: 'm1' });
    emulators.push(m1);
    const slowPrompt = profilesDir({ 'test-slow-prompt': { timeouts: { commandMs: 5000, promptMs: 30_000, submitMs: 60_000 } } });
    const t = await transport([{ path: m0.path, profile: 'test-slow-prompt' }, { path: m1.path }], { profilesDir: slowPrompt });
    const pending = t.transport.submit(message('handed over'));
    await until(() => m0.commands.some((c) => c.startsWith('AT+CMGS=')), 'm0 to get the AT+CMGS');
    await m1.plugIn();
    await until(() => t.transport.links().filter((l) => l.state === 'bound').length === 2, 'm1 to be ready');
    // m0 is unplugged before the PDU went out: the part goes back to the shared queue, m1 sends it.
    await m0.unplug();
    const outcomes = await pending;
    expect(outcomes).toEqual([expect.objectContaining({ part: 1, kind: 'accepted' })]);
    expect(m0.submitPdusReceived).toBe(0);
    expect(m1.received.map((r) => r.pdu.userData.text)).toEqual(['handed over']);
  });

  it('answers TRANSPORT_DOWN without touching a port when no modem is ready', async () => {
    const t = await transport([{ path: join(dir, 'missing-device') }]);
    expect(t.transport.currentState()).toEqual({ state: 'down', reason: 'no modem ready' });
    expect(await t.transport.submit(message('x'))).toEqual([{ part: 1, kind: 'not-sent', reason: 'TRANSPORT_DOWN' }]);
  });

  it('refuses a profile that fails validation, naming the file and the key', () => {
    const bad = profilesDir({ 'test-bad': { messagesPerMinute: 'fast' } });
    expect(() => new ModemTransport({ name: 'x', type: 'modem', devices: [{ path: '/dev/null', profile: 'test-bad' }], profilesDir: bad })).toThrow(
      /test-bad\.json: \/messagesPerMinute must be number/,
    );
  });
});

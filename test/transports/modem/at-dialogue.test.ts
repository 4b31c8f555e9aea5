/**
 * The modem transport's AT dialogue over @serialport/binding-mock: the whole transport (device
 * worker, serial stream, AT channel, session) runs against a modem scripted byte for byte, each
 * case with the replies read whole and one byte per read. The serial path itself (a real tty, an
 * unplug) stays with the socat pty tests in modem-transport.test.ts.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeCmgsPdu } from '../../../src/pdu/index.js';
import { planMessage } from '../../../src/sms/index.js';
import { defaultProfilesDir, ModemTransport, type ModemTransportConfig, type ModemTransportOptions, probeModem } from '../../../src/transports/modem/index.js';
import type { OutboundMessage, PartOutcome, TransportReceipt } from '../../../src/transports/transport.js';
import { ManualClock } from '../../support/manual-clock.js';
import { buildStatusReportPdu } from '../../support/modem-emulator/index.js';
import { type Delivery, readyModem, type Script, ScriptedModems } from './scripted-modem.js';

let dir: string;
const transports: ModemTransport[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-at-dialogue-'));
});

afterEach(async () => {
  for (const t of transports.splice(0)) await t.stop(500);
  rmSync(dir, { recursive: true, force: true });
});

/** A profiles directory with the shipped generic profile plus 'test-*' variants of it. */
function profilesDir(variants: Record<string, Record<string, unknown>>): string {
  const target = join(dir, 'hardware');
  mkdirSync(target, { recursive: true });
  copyFileSync(join(defaultProfilesDir(), 'generic.json'), join(target, 'generic.json'));
  const generic = JSON.parse(readFileSync(join(defaultProfilesDir(), 'generic.json'), 'utf8')) as Record<string, unknown>;
  for (const [name, changes] of Object.entries(variants)) writeFileSync(join(target, `${name}.json`), JSON.stringify({ ...generic, name, ...changes }));
  return target;
}

async function transport(
  modems: ScriptedModems,
  devices: ModemTransportConfig['devices'],
  extra: Partial<ModemTransportConfig> = {},
  options: ModemTransportOptions = {},
): Promise<{ transport: ModemTransport; receipts: TransportReceipt[] }> {
  const t = new ModemTransport(
    { name: 'modems', type: 'modem', devices: devices.map((d) => ({ messagesPerMinute: 6000, ...d })), reopenBackoffMs: [100, 200], retryDelayMs: 10, healthIntervalMs: 3_600_000, ...extra },
    { registrationPollMs: 50, serialBinding: modems.binding, ...options },
  );
  const receipts: TransportReceipt[] = [];
  t.setHandlers({
    onReceipt: async (r) => {
      receipts.push(r);
    },
    onInbound: async () => undefined,
    onState: () => undefined,
  });
  transports.push(t);
  await t.start();
  return { transport: t, receipts };
}

function message(text: string, key = 'm1', destination = '353871234567'): OutboundMessage {
  const plan = planMessage(text);
  return { messageKey: key, destination, sender: { value: 'Test', kind: 'alphanumeric', ton: 5, npi: 0 }, encoding: plan.encoding, segments: plan.segments, concatReference: 0x2a };
}

async function until(check: () => boolean, what: string, maxMs = 10_000): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function messageIdOf(outcome: PartOutcome | undefined): string {
  if (outcome?.kind !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
  return outcome.messageId;
}

/** TS 27.005 §3.5.1: the prompt is '\r\n> ' and nothing after it; the result follows the PDU. */
function acceptingModem(firstReference = 7): Script {
  let reference = firstReference;
  return (written) => {
    if (written.kind === 'pdu') {
      const mr = reference;
      reference = (reference + 1) % 256;
      return `\r\n+CMGS: ${mr}\r\n\r\nOK\r\n`;
    }
    // The send was cancelled: the modem's final result for the AT+CMGS.
    if (written.kind === 'escape') return '\r\nOK\r\n';
    if (written.line.startsWith('AT+CMGS=')) return '\r\n> ';
    return readyModem(written.line);
  };
}

function statusReport(messageReference: number, status = 0x00, recipient = '353871234567'): string {
  const at = new Date('2026-11-25T10:00:00Z');
  return buildStatusReportPdu({ smsc: '353860000000', messageReference, recipient, submittedAt: at, dischargedAt: at, status }).hex;
}

for (const delivery of ['whole', 'byte-by-byte'] as const satisfies readonly Delivery[]) {
  describe(`ModemTransport on a scripted modem over the mock serial binding (replies ${delivery === 'whole' ? 'whole' : 'one byte per read'})`, () => {
    it('initialises over the injected binding in the profile order', async () => {
      const modems = new ScriptedModems();
      const modem = modems.add('/dev/mock-modem0', delivery, acceptingModem());
      const t = await transport(modems, [{ path: modem.path, name: 'm0' }]);
      expect(t.transport.currentState()).toEqual({ state: 'bound', detail: '1/1 devices ready' });
      expect(modem.commands.slice(0, 9)).toEqual(['AT', 'ATE0', 'AT+CMEE=1', 'AT+CPIN?', 'AT+CREG?', 'AT+CMGF=0', 'AT+CSMS=0', 'AT+CPMS="SM","SM","SM"', 'AT+CNMI=2,1,0,1,0']);
      // What the test says it feeds: whole answers in one read, or one byte per read.
      if (delivery === 'whole') expect(Math.max(...modem.readSizes)).toBeGreaterThan(1);
      else expect(new Set(modem.readSizes)).toEqual(new Set([1]));
    });

    it('writes AT+CMGS=<TPDU octets>, waits for the "> " prompt (no newline after it), then the PDU and Ctrl-Z', async () => {
      const modems = new ScriptedModems();
      let promptDue = false;
      const modem = modems.add('/dev/mock-modem0', delivery, (written) => {
        if (written.kind === 'pdu') return '\r\n+CMGS: 7\r\n\r\nOK\r\n';
        if (written.kind === 'escape') return null;
        if (written.line.startsWith('AT+CMGS=')) {
          promptDue = true;
          return null;
        }
        return readyModem(written.line);
      });
      const t = await transport(modems, [{ path: modem.path, name: 'm0' }]);
      const submitted = t.transport.submit(message('hello over the mock'));
      await until(() => promptDue, 'AT+CMGS');
      // The modem has not prompted: nothing but the command line may have gone out.
      expect(modem.pdus).toEqual([]);
      modem.emit('\r\n> ');
      const outcomes = await submitted;
      expect(outcomes).toHaveLength(1);
      expect(messageIdOf(outcomes[0])).toMatch(/^m0-[0-9a-f-]{36}$/);
      const cmgs = modem.commands.filter((c) => c.startsWith('AT+CMGS='));
      expect(cmgs).toHaveLength(1);
      const written = modem.written.map((w) => (w.kind === 'command' ? w.line : 'PDU'));
      expect(written.indexOf('PDU')).toBe(written.indexOf(cmgs[0] as string) + 1);
      // The length counts the TPDU only (the PDU starts with the 00 SMSC field); the decoder checks it.
      const pdu = decodeCmgsPdu(modem.pdus[0] as string, Number((cmgs[0] as string).slice('AT+CMGS='.length)));
      expect(pdu.destination.digits).toBe('353871234567');
      expect(pdu.userData.text).toBe('hello over the mock');
      expect(pdu.statusReportRequest).toBe(true);
    });

    it('reports a temporary +CMS ERROR 42 (congestion) after one AT+CMGS, and the next submit is accepted', async () => {
      const modems = new ScriptedModems();
      let failures = 1;
      const accept = acceptingModem();
      const modem = modems.add('/dev/mock-modem0', delivery, (written, m) => (written.kind === 'pdu' && failures-- > 0 ? '\r\n+CMS ERROR: 42\r\n' : accept(written, m)));
      const t = await transport(modems, [{ path: modem.path }]);
      // The engine alone retries: one AT+CMGS, then the outcome with retryDelayMs as retryAfterMs.
      expect(await t.transport.submit(message('retry me'))).toEqual([{ part: 1, kind: 'temporary', status: 'CMS_ERROR_42', errorCode: 42, retryAfterMs: 10 }]);
      expect(modem.commands.filter((c) => c.startsWith('AT+CMGS='))).toHaveLength(1);
      expect((await t.transport.submit(message('retry me')))[0]?.kind).toBe('accepted');
      expect(modem.pdus).toHaveLength(2);
    });

    it('sends once per submit whatever maxAttemptsPerPart says: temporary CMS_ERROR_332', async () => {
      const modems = new ScriptedModems();
      const accept = acceptingModem();
      const modem = modems.add('/dev/mock-modem0', delivery, (written, m) => (written.kind === 'pdu' ? '\r\n+CMS ERROR: 332\r\n' : accept(written, m)));
      const t = await transport(modems, [{ path: modem.path }], { maxAttemptsPerPart: 2 });
      expect(await t.transport.submit(message('network timeout'))).toEqual([{ part: 1, kind: 'temporary', status: 'CMS_ERROR_332', errorCode: 332, retryAfterMs: 10 }]);
      expect(modem.pdus).toHaveLength(1);
    });

    it('fails a part permanently on +CMS ERROR 1 (unassigned number) in the verbose AT+CMEE=2 form', async () => {
      const modems = new ScriptedModems();
      const accept = acceptingModem();
      const modem = modems.add('/dev/mock-modem0', delivery, (written, m) => (written.kind === 'pdu' ? '\r\n+CMS ERROR: Unassigned (unallocated) number\r\n' : accept(written, m)));
      const t = await transport(modems, [{ path: modem.path, profile: 'test-verbose' }], { profilesDir: profilesDir({ 'test-verbose': { cmee: 2 } }) });
      expect(modem.commands).toContain('AT+CMEE=2');
      expect(await t.transport.submit(message('nobody there'))).toEqual([{ part: 1, kind: 'permanent', status: 'CMS_ERROR_1', errorCode: 1 }]);
    });

    it('routes an unsolicited +CDS arriving in the middle of AT+CMGS apart: its receipt goes to the earlier part, the +CMGS to this one', async () => {
      const modems = new ScriptedModems();
      let reference = 7;
      const modem = modems.add('/dev/mock-modem0', delivery, (written) => {
        if (written.kind === 'command') return written.line.startsWith('AT+CMGS=') ? '\r\n> ' : readyModem(written.line);
        if (written.kind === 'escape') return null;
        const mr = reference++;
        // The second submit's result comes with the first one's status report in between.
        const cds = mr === 8 ? `\r\n+CDS: 25\r\n${statusReport(7)}\r\n` : '';
        return `${cds}\r\n+CMGS: ${mr}\r\n\r\nOK\r\n`;
      });
      const t = await transport(modems, [{ path: modem.path }]);
      const first = messageIdOf((await t.transport.submit(message('first', 'a')))[0]);
      const second = messageIdOf((await t.transport.submit(message('second', 'b')))[0]);
      expect(second).not.toBe(first);
      await until(() => t.receipts.length === 1, 'the receipt of the first part');
      expect(t.receipts[0]).toMatchObject({ messageId: first, status: 'DELIVRD', final: true, errorCode: '0', raw: statusReport(7) });
      // The second part was remembered under its own reference, 8, not the report's.
      modem.emit(`\r\n+CDS: 25\r\n${statusReport(8, 0x46)}\r\n`);
      await until(() => t.receipts.length === 2, 'the receipt of the second part');
      expect(t.receipts[1]).toMatchObject({ messageId: second, status: 'EXPIRED', final: true });
    });

    it('matches receipts by TP-MR across the wrap from 255 to 0', async () => {
      const modems = new ScriptedModems();
      const modem = modems.add('/dev/mock-modem0', delivery, acceptingModem(255));
      const t = await transport(modems, [{ path: modem.path }]);
      const a = messageIdOf((await t.transport.submit(message('mr 255', 'a', '353871111111')))[0]);
      const b = messageIdOf((await t.transport.submit(message('mr 0', 'b', '353871111111')))[0]);
      modem.emit(`\r\n+CDS: 25\r\n${statusReport(0, 0x00, '353871111111')}\r\n\r\n+CDS: 25\r\n${statusReport(255, 0x00, '353871111111')}\r\n`);
      await until(() => t.receipts.length === 2, 'both receipts');
      expect(t.receipts.map((r) => r.messageId)).toEqual([b, a]);
    });

    it('routes unsolicited noise in the middle of responses apart from the responses', async () => {
      const modems = new ScriptedModems();
      const noise = '\r\n^RSSI: 14\r\n\r\nRING\r\n\r\n^MODE: 5,4\r\n';
      const accept = acceptingModem();
      const modem = modems.add('/dev/mock-modem0', delivery, (written, m) => {
        const reply = accept(written, m);
        // Between each answer's information lines and its final result (the prompt aside).
        return reply === null || reply === '\r\n> ' ? reply : reply.replace(/\r\n([^\r\n]+)\r\n$/, `${noise}\r\n$1\r\n`);
      });
      const t = await transport(modems, [{ path: modem.path }]);
      const outcomes = await Promise.all([t.transport.submit(message('one', 'a', '353871111111')), t.transport.submit(message('two', 'b', '353872222222'))]);
      expect(outcomes.flat().map((o) => o.kind)).toEqual(['accepted', 'accepted']);
      expect(modem.pdus.map((hex) => decodeCmgsPdu(hex, hex.length / 2 - 1).userData.text).sort()).toEqual(['one', 'two']);
    });

    it('cancels a send with ESC when the prompt never comes, fails the part temporarily, and keeps working', async () => {
      const modems = new ScriptedModems();
      let promptsToDrop = 1;
      const accept = acceptingModem();
      const modem = modems.add('/dev/mock-modem0', delivery, (written, m) => {
        if (written.kind === 'command' && written.line.startsWith('AT+CMGS=') && promptsToDrop-- > 0) return null;
        return accept(written, m);
      });
      const fast = profilesDir({ 'test-fast': { timeouts: { commandMs: 2000, promptMs: 300, submitMs: 5000 } } });
      const t = await transport(modems, [{ path: modem.path, profile: 'test-fast' }], { profilesDir: fast });
      expect(await t.transport.submit(message('no prompt', 'a'))).toEqual([{ part: 1, kind: 'temporary', status: 'PROMPT_TIMEOUT', retryAfterMs: 10 }]);
      expect((await t.transport.submit(message('after the prompt failure', 'b')))[0]?.kind).toBe('accepted');
      expect(modem.written.filter((w) => w.kind === 'escape')).toHaveLength(1);
      expect(modem.pdus.map((hex) => decodeCmgsPdu(hex, hex.length / 2 - 1).userData.text)).toEqual(['after the prompt failure']);
    });
  });
}

describe('smsgate modem probe over the mock serial binding', () => {
  it('reads identity, SIM state, signal, registration and operator through the given binding', async () => {
    const modems = new ScriptedModems();
    const identity: Record<string, string> = { 'AT+CGMI': 'Quectel', 'AT+CGMM': 'EC25', 'AT+CGMR': 'EC25EFAR06A09M4G', 'AT+CGSN': '866758041234567' };
    const modem = modems.add('/dev/mock-probe', 'byte-by-byte', (written) => {
      if (written.kind !== 'command') return null;
      const value = identity[written.line];
      return value === undefined ? readyModem(written.line) : `\r\n${value}\r\n\r\nOK\r\n`;
    });
    const result = await probeModem(modem.path, 'generic', undefined, modems.binding);
    expect(result).toEqual({
      path: '/dev/mock-probe',
      profile: 'generic',
      manufacturer: 'Quectel',
      model: 'EC25',
      revision: 'EC25EFAR06A09M4G',
      imei: '866758041234567',
      simState: 'READY',
      signal: { rssi: 20, dbm: -73 },
      registration: 'registered-home',
      operator: 'Test Net',
    });
    // A probe initialises nothing beyond echo and error format, and sends nothing.
    expect(modem.commands.slice(0, 2)).toEqual(['ATE0', 'AT+CMEE=1']);
    expect(modem.commands.filter((c) => c.startsWith('AT+CMGS') || c.startsWith('AT+CPIN='))).toEqual([]);
  });
});

describe('ModemTransport on an injected clock', () => {
  const START_MS = Date.UTC(2031, 0, 1);

  it('keeps matching after an intermediate report (TP-ST 0x20, ENROUTE) and forgets the part after the final one', async () => {
    const clock = new ManualClock(START_MS);
    const logs: string[] = [];
    const logger = pino({ level: 'warn' }, new Writable({ write: (chunk: Buffer, _enc, done) => (logs.push(chunk.toString()), done()) }));
    const modems = new ScriptedModems();
    const modem = modems.add('/dev/mock-modem0', 'whole', acceptingModem());
    const t = await transport(modems, [{ path: modem.path }], {}, { clock, logger });
    const messageId = messageIdOf((await t.transport.submit(message('pending a while')))[0]);
    modem.emit(`\r\n+CDS: 25\r\n${statusReport(7, 0x20)}\r\n`);
    await until(() => t.receipts.length === 1, 'the intermediate receipt');
    expect(t.receipts[0]).toMatchObject({ messageId, status: 'ENROUTE', final: false });
    modem.emit(`\r\n+CDS: 25\r\n${statusReport(7, 0x00)}\r\n`);
    await until(() => t.receipts.length === 2, 'the final receipt');
    expect(t.receipts[1]).toMatchObject({ messageId, status: 'DELIVRD', final: true });
    expect(t.receipts[1]?.doneAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
    // A repeat of the final report finds no part: the lookup looks again 50, 200 and 1,000 ms
    // later by the clock (a report can overtake its +CMGS), stepped here, and then gives up.
    modem.emit(`\r\n+CDS: 25\r\n${statusReport(7, 0x00)}\r\n`);
    const gaveUp = (): boolean => logs.some((line) => line.includes('status report matches no sent part'));
    const repeatedAtMs = clock.now();
    await until(() => {
      // One timer at a time (the device's idle waits share the clock), never past the next one.
      const next = clock.nextTimerAtMs();
      if (!gaveUp() && next !== null && next <= clock.now() + 1_000) clock.advanceTo(next);
      return gaveUp();
    }, 'the lookup to give up');
    // It gave up only once the clock (not the wall: a few ms passed) had run through every retry.
    expect(clock.now() - repeatedAtMs).toBeGreaterThanOrEqual(50 + 200 + 1_000);
    expect(t.receipts).toHaveLength(2);
  });

  it('dates device states by the clock and paces sends on it: the next part waits until the clock reaches the slot', async () => {
    const clock = new ManualClock(START_MS);
    const modems = new ScriptedModems();
    const modem = modems.add('/dev/mock-modem0', 'whole', acceptingModem());
    // Two messages a minute: the second part may go 30 s of clock time after the first.
    const t = await transport(modems, [{ path: modem.path, messagesPerMinute: 2 }], {}, { clock });
    expect(t.transport.links?.()[0]?.sinceMs).toBe(START_MS);
    const first = t.transport.submit(message('first', 'a'));
    const second = t.transport.submit(message('second', 'b'));
    expect((await first)[0]?.kind).toBe('accepted');
    // The device now sleeps on the clock until its next slot; no wall time makes it send.
    // (The once-a-minute prune of old receipt keys is due later, at START_MS + 60 s.)
    await until(() => clock.nextTimerAtMs() === START_MS + 30_000, 'the pacing timer');
    expect(modem.pdus).toHaveLength(1);
    clock.advanceTo(START_MS + 30_000);
    expect((await second)[0]?.kind).toBe('accepted');
    expect(modem.pdus).toHaveLength(2);
  });
});

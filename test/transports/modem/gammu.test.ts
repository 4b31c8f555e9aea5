/**
 * The emulator checked against a real, independent AT client: gammu (https://wammu.eu/gammu/)
 * opens the pty as a modem, identifies it, and sends SMS in PDU mode. The emulator decodes every
 * PDU gammu writes with src/pdu: this cross-checks our decoder against gammu's encoder.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModemEmulator } from '../../support/modem-emulator/index.js';

const run = promisify(execFile);
let dir: string;
let emulator: ModemEmulator;
let gammurc: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-gammu-'));
  emulator = new ModemEmulator({
    dir,
    name: 'gammu0',
    identity: { manufacturer: 'Quectel', model: 'EC25', revision: 'EC25EFAR06A06M4G', imei: '867698041234567', imsi: '272021234567890' },
  });
  await emulator.plugIn();
  gammurc = join(dir, 'gammurc');
  // gammu's AT driver at 115200 baud (gammurc(5): connection = at115200).
  writeFileSync(gammurc, `[gammu]\ndevice = ${emulator.path}\nconnection = at115200\n`);
});

afterEach(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

async function gammu(...args: string[]): Promise<string> {
  const { stdout } = await run('gammu', ['-c', gammurc, ...args], { timeout: 60_000 });
  return stdout;
}

describe('gammu as the client of the emulated modem', () => {
  it('identifies the modem', async () => {
    const out = await gammu('identify');
    expect(out).toMatch(/Manufacturer\s*:\s*Quectel/);
    expect(out).toMatch(/IMEI\s*:\s*867698041234567/);
    expect(emulator.protocolErrors).toEqual([]);
  }, 90_000);

  it('sends a one-part SMS whose PDU our decoder reads exactly', async () => {
    const out = await gammu('sendsms', 'TEXT', '353871234567', '-text', 'hello from gammu');
    expect(out).toContain('message reference=0');
    expect(emulator.protocolErrors).toEqual([]);
    expect(emulator.received).toHaveLength(1);
    const pdu = emulator.received[0]?.pdu;
    expect(pdu?.destination.digits).toBe('353871234567');
    expect(pdu?.userData.text).toBe('hello from gammu');
    // gammu writes the SMSC it read with AT+CSCA? in front of the TPDU (TS 27.005 §3.1 <pdu>).
    expect(pdu?.smsc?.value).toBe('+353870000000');
  }, 90_000);

  it('sends a long SMS as concatenated parts that our decoder reassembles', async () => {
    const text = 'Gammu splits this text into several concatenated parts. '.repeat(5).trim();
    await gammu('sendsms', 'TEXT', '353871234567', '-len', String(text.length), '-text', text);
    expect(emulator.protocolErrors).toEqual([]);
    const parts = emulator.received.map((r) => r.pdu.userData);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.map((p) => p.concat?.sequence)).toEqual(parts.map((_, i) => i + 1));
    expect(new Set(parts.map((p) => p.concat?.total))).toEqual(new Set([parts.length]));
    expect(parts.map((p) => p.text).join('')).toBe(text);
    expect(emulator.received.map((r) => r.messageReference)).toEqual(parts.map((_, i) => i));
  }, 90_000);

  it('sends a UCS-2 SMS', async () => {
    await gammu('sendsms', 'TEXT', '353871234567', '-unicode', '-text', 'Привет, мир');
    expect(emulator.protocolErrors).toEqual([]);
    expect(emulator.received[0]?.pdu.dataCoding.alphabet).toBe('UCS-2');
    expect(emulator.received[0]?.pdu.userData.text).toBe('Привет, мир');
  }, 90_000);
});

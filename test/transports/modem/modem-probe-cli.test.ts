/**
 * `smsgate modem probe` run as a real process against the emulated modem on a socat pty.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ModemEmulator } from '../../support/modem-emulator/index.js';
import { type CompiledCli, compileCli } from '../../support/compile-cli.js';

const root = resolve(import.meta.dirname, '../../..');
let cli: CompiledCli;
let dir: string;
let emulator: ModemEmulator;

beforeAll(async () => {
  cli = await compileCli(root, ['src/cli/commands/modem.ts']);
  dir = mkdtempSync(join(tmpdir(), 'smsgate-probe-'));
  emulator = new ModemEmulator({ dir, name: 'probe0', rssi: 23, operator: 'Probe Net', identity: { manufacturer: 'SIMCOM_Ltd', model: 'SIMCOM_SIM7600E', revision: 'LE20B04SIM7600M22', imei: '861234567890123', imsi: '272010000000001' } });
  await emulator.plugIn();
}, 120_000);

afterAll(async () => {
  await emulator?.close();
  await cli?.remove();
  rmSync(dir, { recursive: true, force: true });
});

describe('smsgate modem probe', () => {
  test('prints manufacturer, model, IMEI, SIM state, signal and registration as JSON', async () => {
    const result = await cli.run('modem', 'probe', '--path', emulator.path, '--profile', 'sim7600');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      path: emulator.path,
      profile: 'sim7600',
      manufacturer: 'SIMCOM_Ltd',
      model: 'SIMCOM_SIM7600E',
      revision: 'LE20B04SIM7600M22',
      imei: '861234567890123',
      simState: 'READY',
      signal: { rssi: 23, dbm: -67 },
      registration: 'registered-home',
      operator: 'Probe Net',
    });
  });

  test('exits 1 with a coded message when the device cannot be opened', async () => {
    const result = await cli.run('modem', 'probe', '--path', join(dir, 'nothing-here'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^smsgate: MODEM_OPEN_FAILED: /);
  });

  test('exits 1 naming an unknown profile', async () => {
    const result = await cli.run('modem', 'probe', '--path', emulator.path, '--profile', 'nokia-3310');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/MODEM_PROFILE_UNKNOWN: no modem profile 'nokia-3310'/);
  });

  test('prints the usage line and exits 2 on bad arguments', async () => {
    for (const args of [['modem', 'probe'], ['modem', 'scan'], ['modem', 'probe', '--path', '/dev/x', '--speed', '9600']]) {
      const result = await cli.run(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('usage: smsgate modem probe --path DEV [--profile NAME]');
    }
  });
});

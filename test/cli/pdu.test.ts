/**
 * `smsgate pdu encode|decode` run as a real process (CLI entry point compiled with the pdu command).
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { decodeCmgsPdu } from '../../src/pdu/index.js';
import { type CompiledCli, compileCli } from '../support/compile-cli.js';

const root = resolve(import.meta.dirname, '../..');
let cli: CompiledCli;

beforeAll(async () => {
  cli = await compileCli(root, ['src/cli/commands/pdu.ts']);
}, 120_000);

afterAll(async () => {
  await cli?.remove();
});

const USAGE_LINE = 'usage: smsgate pdu encode --to MSISDN --text T [--status-report] | pdu decode HEX';

describe('smsgate pdu encode', () => {
  test('prints the classic hellohello SMS-SUBMIT with the default 24 h validity (TP-VP 0xA7)', async () => {
    const result = await cli.run('pdu', 'encode', '--to', '+46708251358', '--text', 'hellohello');
    expect(result).toEqual({ code: 0, stdout: '0011000B916407281553F80000A70AE8329BFD4697D9EC37\n', stderr: '' });
  });

  test('normalises an Irish national number to 353... and sets TP-SRR with --status-report', async () => {
    const result = await cli.run('pdu', 'encode', '--to', '0871234567', '--text', 'hi', '--status-report');
    expect(result.code).toBe(0);
    const hex = result.stdout.trim();
    expect(hex.slice(0, 6)).toBe('003100');
    const decoded = decodeCmgsPdu(hex, hex.length / 2 - 1);
    expect(decoded.destination.value).toBe('+353871234567');
    expect(decoded.statusReportRequest).toBe(true);
  });

  test('prints one PDU per part, one per line', async () => {
    const result = await cli.run('pdu', 'encode', '--to', '353871234567', '--text', 'z'.repeat(400));
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    lines.forEach((line, i) => {
      const decoded = decodeCmgsPdu(line, line.length / 2 - 1);
      expect(decoded.userData.concat).toMatchObject({ total: 3, sequence: i + 1 });
    });
  });

  test.each([
    [['pdu', 'encode', '--text', 'hi']],
    [['pdu', 'encode', '--to', '353871234567']],
    [['pdu', 'encode', '--to', '35387-123', '--text', 'hi']],
    [['pdu', 'encode', '--to', '353871234567', '--text', 'hi', '--flash']],
    [['pdu', 'transcode']],
    [['pdu']],
  ])('bad arguments %j print the usage line and exit 2', async (args) => {
    const result = await cli.run(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(USAGE_LINE);
    expect(result.stdout).toBe('');
  });
});

describe('smsgate pdu decode', () => {
  test('prints a status report as JSON', async () => {
    const result = await cli.run('pdu', 'decode', '07911326060032F006D90B911326880736F4111011719551401110117195714000');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      type: 'SMS-STATUS-REPORT',
      messageReference: 217,
      recipient: { value: '+31628870634' },
      status: 0,
      dischargeTime: { local: '2011-01-11T17:59:17+01:00' },
    });
  });

  test('prints a DELIVER with its text', async () => {
    const result = await cli.run('pdu', 'decode', '07917283010010F5040BC87238880900F10000993092516195800AE8329BFD4697D9EC37');
    expect(JSON.parse(result.stdout)).toMatchObject({ type: 'SMS-DELIVER', originator: { digits: '27838890001' }, userData: { text: 'hellohello' }, text: 'hellohello', concat: null });
  });

  test('exits 2 with the usage line when HEX is missing or not hex', async () => {
    for (const args of [['pdu', 'decode'], ['pdu', 'decode', 'XYZ1'], ['pdu', 'decode', '001']]) {
      const result = await cli.run(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(USAGE_LINE);
    }
  });

  test('exits 1 with the coded failure for hex that is not a valid PDU', async () => {
    const result = await cli.run('pdu', 'decode', '0011000B916407');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^smsgate: PDU_TRUNCATED: /);
  });
});

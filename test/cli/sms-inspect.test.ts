/**
 * `smsgate sms inspect` run as a real process: the CLI entry point and the sms command are
 * compiled with the project's TypeScript into a temporary folder (only the modules this command
 * loads, so other engineers' work in progress cannot break or race this build), then spawned.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type CompiledCli, compileCli } from '../support/compile-cli.js';

const root = resolve(import.meta.dirname, '../..');
let cli: CompiledCli;

beforeAll(async () => {
  cli = await compileCli(root, ['src/cli/commands/sms.ts']);
}, 120_000);

afterAll(async () => {
  await cli?.remove();
});

const smsgate = (...args: string[]) => cli.run(...args);

const USAGE_LINE = 'usage: smsgate sms inspect --text T';

describe('smsgate sms inspect', () => {
  test('prints encoding, units, parts and the text as one JSON line', async () => {
    const result = await smsgate('sms', 'inspect', '--text', 'Hello {world}');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('{"encoding":"GSM-7","units":15,"parts":1,"text":"Hello {world}"}\n');
  });

  test('accepts --text=value and prints the text after the replacements', async () => {
    const result = await smsgate('sms', 'inspect', '--text=\u201cHi\u201d \u2013 it\u2019s ok\u2026 \u2022');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ encoding: 'GSM-7', units: 17, parts: 1, text: '"Hi" - it\'s ok. *' });
  });

  test('counts 161 GSM-7 characters as 2 parts', async () => {
    const result = await smsgate('sms', 'inspect', '--text', 'a'.repeat(161));
    expect(JSON.parse(result.stdout)).toMatchObject({ encoding: 'GSM-7', units: 161, parts: 2 });
  });

  test('reports UCS-2 with an emoji counted as 2 units', async () => {
    const result = await smsgate('sms', 'inspect', '--text', 'Hi \u{1F600}');
    expect(JSON.parse(result.stdout)).toEqual({ encoding: 'UCS-2', units: 5, parts: 1, text: 'Hi \u{1F600}' });
  });

  test.each([
    ['missing --text', ['sms', 'inspect']],
    ['--text without a value', ['sms', 'inspect', '--text']],
    ['an unknown option', ['sms', 'inspect', '--text', 'hi', '--verbose']],
    ['an extra positional argument', ['sms', 'inspect', '--text', 'hi', 'extra']],
    ['a missing subcommand', ['sms']],
    ['an unknown subcommand', ['sms', 'count', '--text', 'hi']],
  ])('%s prints the usage line on stderr and exits 2', async (_name, args) => {
    const result = await smsgate(...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(USAGE_LINE);
  });
});

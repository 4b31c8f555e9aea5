/**
 * `smsgate sms inspect` run as a real process: the CLI entry point and the sms command are
 * compiled with the project's TypeScript into a temporary folder (only the modules this command
 * loads, so other engineers' work in progress cannot break or race this build), then spawned.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
let outDir = '';

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'smsgate-cli-'));
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  await run(process.execPath, [
    tsc, '--outDir', outDir, '--rootDir', join(root, 'src'), '--module', 'NodeNext', '--moduleResolution', 'NodeNext',
    '--target', 'ES2022', '--strict', '--skipLibCheck', '--types', 'node',
    join(root, 'src/cli/main.ts'), join(root, 'src/cli/commands/sms.ts'),
  ], { cwd: root });
  await writeFile(join(outDir, 'package.json'), '{"type":"module"}');
}, 120_000);

afterAll(async () => {
  if (outDir !== '') await rm(outDir, { recursive: true, force: true });
});

async function smsgate(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(outDir, 'cli/main.js'), ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

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

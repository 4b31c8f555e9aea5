/**
 * docs/reference/commands.md documents every command `smsgate --help` lists (the built CLI, as an
 * operator runs it), and every option those usage lines name.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const CLI = 'dist/src/cli/main.js';

/** `smsgate inbound route add --client NAME ...` -> `smsgate inbound route add`: the words before the first option or placeholder. */
export function commandOf(usageLine: string): string {
  const words = usageLine.trim().split(/\s+/);
  const command: string[] = [];
  for (const word of words) {
    if (!/^[a-z][a-z0-9-]*$/.test(word)) break;
    command.push(word);
  }
  return command.join(' ');
}

function helpUsageLines(): string[] {
  const help = execFileSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' });
  return help.split('\n').filter((line) => line.trimStart().startsWith('smsgate '));
}

describe('docs/reference/commands.md', () => {
  const doc = readFileSync('docs/reference/commands.md', 'utf8');
  const lines = helpUsageLines();

  it('reads the usage lines of the built CLI', () => {
    expect(lines.length).toBeGreaterThan(30);
    expect(lines.map(commandOf)).toContain('smsgate inbound route add');
    expect(lines.map(commandOf)).toContain('smsgate campaign show');
  });

  it('names every command smsgate --help lists', () => {
    const missing = [...new Set(lines.map(commandOf))].filter((command) => !doc.includes(command));
    expect(missing, `commands missing from docs/reference/commands.md: ${missing.join(', ')}`).toEqual([]);
  });

  it('names every option of every usage line', () => {
    const options = new Set(lines.flatMap((line) => line.match(/--[a-z][a-z0-9-]*/g) ?? []));
    const missing = [...options].filter((option) => !doc.includes(option));
    expect(missing, `options missing from docs/reference/commands.md: ${missing.join(', ')}`).toEqual([]);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { main, usage } from '../../src/cli/main.js';

describe('smsgate command dispatcher', () => {
  const stderr: string[] = [];
  const stdout: string[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    stderr.length = 0;
    stdout.length = 0;
  });
  const capture = () => {
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (stderr.push(String(chunk)), true));
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (stdout.push(String(chunk)), true));
  };

  it('lists every command of the public contract in its usage', () => {
    for (const command of ['serve', 'migrate', 'client create', 'client set-webhook', 'user create', 'token create', 'token revoke',
      'sender add', 'webhook list', 'webhook replay', 'sms inspect', 'pdu encode', 'pdu decode', 'modem probe']) {
      expect(usage()).toContain(`smsgate ${command}`);
    }
  });

  it('exits 2 with the usage on stderr when no command is given', async () => {
    capture();
    expect(await main([])).toBe(2);
    expect(stderr.join('')).toContain('usage: smsgate <command>');
    expect(stdout.join('')).toBe('');
  });

  it('exits 2 naming an unknown command', async () => {
    capture();
    expect(await main(['frobnicate'])).toBe(2);
    expect(stderr.join('')).toContain("unknown command 'frobnicate'");
  });

  it('prints the usage on stdout and exits 0 for --help', async () => {
    capture();
    expect(await main(['--help'])).toBe(0);
    expect(stdout.join('')).toContain('smsgate serve');
  });
});

describe('help for every command', () => {
  /** `[command, action]` of every usage line: `token revoke`, `pdu decode`, `serve`. */
  const commandLines = usage().split('\n').filter((line) => line.startsWith('  smsgate ')).map((line) => {
    const [, command, action] = line.trim().split(' ');
    return [command as string, action !== undefined && /^[a-z][a-z-]*$/.test(action) ? action : undefined] as const;
  });

  it.each(commandLines)('smsgate %s %s --help prints its usage on stdout and exits 0', async (command, action) => {
    for (const argv of [[command, ...(action === undefined ? [] : [action]), '--help'], ['help', command, ...(action === undefined ? [] : [action])]]) {
      const out: string[] = [];
      const err: string[] = [];
      vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
      vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (err.push(String(chunk)), true));
      try {
        expect(await main(argv)).toBe(0);
      } finally {
        vi.restoreAllMocks();
      }
      expect(err.join('')).toBe('');
      expect(out.join('')).toMatch(new RegExp(`^usage: smsgate ${command}${action === undefined ? '' : ` ${action}`}( |\\n)`));
    }
  });

  it('--version prints the package version', async () => {
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
    try {
      expect(await main(['--version'])).toBe(0);
    } finally {
      vi.restoreAllMocks();
    }
    expect(out.join('')).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('--version --json prints {"version": ...} (each command has --json)', async () => {
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
    try {
      expect(await main(['--version', '--json'])).toBe(0);
    } finally {
      vi.restoreAllMocks();
    }
    expect(JSON.parse(out.join(''))).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
  });
});

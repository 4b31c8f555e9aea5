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

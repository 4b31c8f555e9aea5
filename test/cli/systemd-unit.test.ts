/**
 * config/smsgate.service, checked by systemd itself: `systemd-analyze verify` (which needs the
 * ExecStart binaries to exist, so the test points them at a wrapper around this build),
 * `systemd-analyze security --offline` for the sandbox's exposure, and `systemd-sysusers` for the
 * service user in the dialout group. Debian packages: systemd (systemd-analyze, systemd-sysusers).
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/gateway-process.js';

const execFileAsync = promisify(execFile);
const UNIT = readFileSync(join(REPO_ROOT, 'config', 'smsgate.service'), 'utf8');
const INSTALLED_BIN = '/usr/local/bin/smsgate';
const dir = mkdtempSync(join(tmpdir(), 'smsgate-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(command, args, { timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

function executable(name: string, script: string): string {
  const bin = join(dir, 'bin', name);
  mkdirSync(join(dir, 'bin'), { recursive: true });
  writeFileSync(bin, script);
  chmodSync(bin, 0o755);
  return bin;
}

/**
 * The unit with its binary path pointed at a wrapper that runs this checkout's build. verify checks
 * that every Exec*= program exists; /bin/kill (ExecReload) is procps's, on every real host, but a
 * minimal CI image may lack it, and then a stand-in takes its place.
 */
function unitWithLocalBinary(name: string): string {
  const bin = executable('smsgate', `#!/bin/sh\nexec ${process.execPath} ${join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js')} "$@"\n`);
  let unit = UNIT.replaceAll(INSTALLED_BIN, bin);
  if (!existsSync('/bin/kill')) unit = unit.replaceAll('/bin/kill ', `${executable('kill', '#!/bin/sh\nexit 0\n')} `);
  const path = join(dir, name);
  writeFileSync(path, unit);
  return path;
}

function settings(key: string): string[] {
  return UNIT.split('\n').filter((line) => line.startsWith(`${key}=`)).map((line) => line.slice(key.length + 1));
}

describe('config/smsgate.service', () => {
  it('passes systemd-analyze verify without a warning', async () => {
    expect(await run('systemd-analyze', ['verify', unitWithLocalBinary('smsgate.service')])).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('verify would catch a misspelt key or a missing binary (the check can fail)', async () => {
    const misspelt = join(dir, 'misspelt.service');
    writeFileSync(misspelt, readFileSync(unitWithLocalBinary('base.service'), 'utf8').replace('Restart=on-failure', 'Restrat=on-failure'));
    expect((await run('systemd-analyze', ['verify', misspelt])).stderr).toContain("Unknown key 'Restrat'");
    const missing = join(dir, 'missing.service');
    writeFileSync(missing, UNIT.replaceAll(INSTALLED_BIN, join(dir, 'no-such-bin')));
    expect((await run('systemd-analyze', ['verify', missing])).code).not.toBe(0);
  });

  it('runs as a dedicated user in dialout, migrates first, restarts on failure, reloads logs on SIGHUP', () => {
    expect(settings('User')).toEqual(['smsgate']);
    expect(settings('SupplementaryGroups')).toEqual(['dialout']);
    expect(settings('ExecStartPre')).toEqual([`${INSTALLED_BIN} migrate`]);
    expect(settings('ExecStart')).toEqual([`${INSTALLED_BIN} serve`]);
    expect(settings('Restart')).toEqual(['on-failure']);
    expect(settings('ExecReload')).toEqual(['/bin/kill -HUP $MAINPID']);
  });

  it('is sandboxed but keeps the serial devices the modems need', async () => {
    expect(settings('PrivateDevices')).not.toContain('yes');
    expect(settings('DevicePolicy')).toEqual(['closed']);
    expect(settings('DeviceAllow')).toEqual(expect.arrayContaining(['char-ttyUSB rw', 'char-ttyACM rw']));
    expect(settings('ProtectSystem')).toEqual(['strict']);
    expect(settings('NoNewPrivileges')).toEqual(['yes']);
    // systemd's own score: 0 (locked down) to 10 (unprotected), given as tenths; 2.5 is "OK".
    const security = await run('systemd-analyze', ['security', '--offline=yes', '--threshold=25', unitWithLocalBinary('security.service')]);
    expect(security.code, security.stdout).toBe(0);
    expect(security.stdout).toMatch(/Overall exposure level for security\.service: [0-2]\.\d OK/);
  });

  it('config/smsgate.sysusers.conf creates the user smsgate and puts it in dialout', async () => {
    const root = join(dir, 'root');
    mkdirSync(join(root, 'etc'), { recursive: true });
    writeFileSync(join(root, 'etc', 'group'), 'dialout:x:20:\n');
    for (const file of ['passwd', 'shadow', 'gshadow']) writeFileSync(join(root, 'etc', file), '');
    const result = await run('systemd-sysusers', [`--root=${root}`, join(REPO_ROOT, 'config', 'smsgate.sysusers.conf')]);
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(join(root, 'etc', 'passwd'), 'utf8')).toMatch(/^smsgate:x:\d+:\d+:smsgate SMS gateway:\/var\/lib\/smsgate:/m);
    expect(readFileSync(join(root, 'etc', 'group'), 'utf8')).toMatch(/^dialout:x:20:smsgate$/m);
  });
});

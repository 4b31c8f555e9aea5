import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../../src/common/errors.js';
import { ModemTransport, defaultProfilesDir, loadProfile, parseProfile } from '../../../src/transports/modem/index.js';

const SHIPPED = ['generic', 'sim800', 'sim7600', 'quectel-ec25', 'huawei-e3372'];

describe('hardware profiles', () => {
  it('ships a valid profile for every device family, each quirk with its source', () => {
    const files = readdirSync(defaultProfilesDir()).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, ''));
    expect(files.sort()).toEqual([...SHIPPED].sort());
    for (const name of SHIPPED) {
      const profile = loadProfile(name);
      expect(profile.name).toBe(name);
      expect(profile.messagesPerMinute).toBeGreaterThan(0);
      expect(profile.quirks.length).toBeGreaterThan(0);
      for (const quirk of profile.quirks) expect(quirk.source.length).toBeGreaterThan(10);
      // TS 27.005 §3.4.1: <ds> 1 delivers +CDS, 2 stores and announces +CDSI; the profile must agree with itself.
      const ds = Number(profile.cnmi.split(',')[3]);
      expect(profile.statusReportDelivery).toBe(ds === 2 ? 'cdsi' : 'cds');
    }
  });

  it('names the file and the key of a profile that fails validation', () => {
    const generic = JSON.parse(readFileSync(join(defaultProfilesDir(), 'generic.json'), 'utf8')) as Record<string, unknown>;
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...generic, baudRate: 12345 }, /my\.json: \/baudRate must be equal to one of the allowed values/],
      [{ ...generic, cnmi: 'two,one' }, /my\.json: \/cnmi must match pattern/],
      [{ ...generic, quirks: [{ id: 'x', description: 'y' }] }, /my\.json: \/quirks\/0\/source|my\.json: \/quirks\/0 must have required property 'source'/],
      [Object.fromEntries(Object.entries(generic).filter(([k]) => k !== 'timeouts')), /my\.json: \/timeouts must have required property 'timeouts'|my\.json: .*timeouts/],
      [{ ...generic, surprise: true }, /my\.json: .* must NOT have additional properties/],
    ];
    for (const [json, message] of cases) {
      let error: unknown;
      try {
        parseProfile(json, 'my.json');
      } catch (err) {
        error = err;
      }
      expect(isGatewayError(error, 'MODEM_PROFILE_INVALID')).toBe(true);
      expect((error as Error).message).toMatch(message);
    }
  });

  it('refuses an unknown profile name and names that are not plain file names', () => {
    expect(() => loadProfile('nokia-3310')).toThrow(/no modem profile 'nokia-3310'/);
    expect(() => loadProfile('../package')).toThrow(/not a profile name/);
  });

  it('sums the devices rates into maxPerSecond and keeps two parts per device in the window', () => {
    const transport = new ModemTransport({
      name: 'pool',
      type: 'modem',
      devices: [{ path: '/dev/a', profile: 'generic' }, { path: '/dev/b', profile: 'sim800' }, { path: '/dev/c', profile: 'quectel-ec25', messagesPerMinute: 30 }],
    });
    expect(transport.maxPerSecond).toBeCloseTo((12 + 8 + 30) / 60);
    expect(transport.windowSize).toBe(6);
  });

  it('refuses two devices with the same name', () => {
    expect(() => new ModemTransport({ name: 'pool', type: 'modem', devices: [{ path: '/dev/x/ttyUSB0' }, { path: '/dev/y/ttyUSB0' }] })).toThrow(/device names must be unique/);
  });
});

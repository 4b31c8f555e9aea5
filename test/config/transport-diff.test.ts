/**
 * What a reload does to each transport is decided by a pure diff of the running and the new
 * entries (deep equality, key order ignored), and the settings a reload cannot apply are named
 * by their top-level key; the running config's hash ignores key order and sees secrets.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson, configHash } from '../../src/config/config-hash.js';
import { diffTransports, restartOnlyChanges } from '../../src/gateway/config-diff.js';
import { resolveConfigFromObject, type TransportEntry } from '../../src/gateway/config.js';

const carrierA: TransportEntry = { name: 'carrierA', type: 'smpp', host: '127.0.0.1', port: 2775, systemId: 'esme', password: 'secret', bindMode: 'transceiver', window: 10, maxPerSecond: 100 } as TransportEntry;
const sim: TransportEntry = { name: 'sim', type: 'simulator' } as TransportEntry;

describe('diffTransports', () => {
  it('keeps an identical entry, even written in another key order', () => {
    const reordered = Object.fromEntries(Object.entries(carrierA).reverse()) as TransportEntry;
    expect(diffTransports([carrierA, sim], [reordered, sim])).toEqual({ unchanged: ['carrierA', 'sim'], changed: [], added: [], removed: [] });
  });

  it('rebinds a transport any of whose settings changed, the password included', () => {
    const newPassword = { ...carrierA, password: 'rotated' } as TransportEntry;
    const newWindow = { ...carrierA, window: 20 } as TransportEntry;
    expect(diffTransports([carrierA], [newPassword]).changed).toEqual(['carrierA']);
    expect(diffTransports([carrierA], [newWindow])).toEqual({ unchanged: [], changed: ['carrierA'], added: [], removed: [] });
  });

  it('sees a nested change (a modem device list) as a change', () => {
    const modems = { name: 'modems', type: 'modem', devices: [{ path: '/dev/ttyUSB0' }] } as unknown as TransportEntry;
    const more = { ...modems, devices: [{ path: '/dev/ttyUSB0' }, { path: '/dev/ttyUSB1' }] } as unknown as TransportEntry;
    expect(diffTransports([modems], [more]).changed).toEqual(['modems']);
  });

  it('starts new names and drains names no longer configured, each in its config order', () => {
    const carrierB = { ...carrierA, name: 'carrierB', port: 2776 } as TransportEntry;
    const modems = { name: 'modems', type: 'modem', devices: [] } as unknown as TransportEntry;
    expect(diffTransports([carrierA, sim, modems], [carrierB, carrierA])).toEqual({ unchanged: ['carrierA'], changed: [], added: ['carrierB'], removed: ['sim', 'modems'] });
  });

  it('a type change under the same name is a change, not a remove and add', () => {
    expect(diffTransports([sim], [{ ...carrierA, name: 'sim' } as TransportEntry]).changed).toEqual(['sim']);
  });
});

describe('restartOnlyChanges', () => {
  const base = {
    database: { path: '/tmp/reload-unit/gw.sqlite' },
    api: { host: '127.0.0.1', port: 8080 },
    transports: [{ name: 'sim', type: 'simulator' }],
    routes: [{ prefix: '', transport: 'sim' }],
  };
  const running = resolveConfigFromObject(base, 'running.json');

  it('names nothing when only routes and transports changed', () => {
    const next = resolveConfigFromObject({ ...base, transports: [{ name: 'sim', type: 'simulator' }, { name: 'sim2', type: 'simulator' }], routes: [{ prefix: '44', transport: 'sim2' }, { prefix: '', transport: 'sim' }] }, 'next.json');
    expect(restartOnlyChanges(running, next)).toEqual([]);
  });

  it('names the listen port and the database, which need a restart', () => {
    const next = resolveConfigFromObject({ ...base, database: { path: '/tmp/reload-unit/other.sqlite' }, api: { host: '127.0.0.1', port: 8090 } }, 'next.json');
    expect(restartOnlyChanges(running, next)).toEqual(['api', 'database']);
  });

  it('names a section added to the file (admin)', () => {
    const next = resolveConfigFromObject({ ...base, admin: { port: 8091 } }, 'next.json');
    expect(restartOnlyChanges(running, next)).toEqual(['admin']);
  });
});

describe('configHash', () => {
  it('is the same for the same config in another key order, and differs for another secret', () => {
    const a = { transports: [carrierA], routes: [{ prefix: '', transport: 'carrierA' }] };
    const b = { routes: [{ transport: 'carrierA', prefix: '' }], transports: [Object.fromEntries(Object.entries(carrierA).reverse())] };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(configHash(a)).toBe(configHash(b));
    expect(configHash(a)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(configHash({ ...a, transports: [{ ...carrierA, password: 'other' }] })).not.toBe(configHash(a));
    // The digest never carries the secret itself.
    expect(configHash(a)).not.toContain('secret');
  });
});

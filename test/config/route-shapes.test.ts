/**
 * Route shapes in the config file (docs/reference/configuration.md#routes): one `transport`, or
 * `transports` with a `strategy`, optional `clients`, `window` and `failoverAfterMs`; every
 * mistake is refused with the file and the key.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfigFromObject } from '../../src/gateway/config.js';
import { unknownRouteClients } from '../../src/cli/route-clients-check.js';

const transports = [
  { name: 'carrierA', type: 'simulator' },
  { name: 'carrierB', type: 'simulator' },
  { name: 'modems', type: 'simulator' },
];

function rejection(routes: unknown[]): string {
  try {
    resolveConfigFromObject({ transports, routes }, 'r.json', {});
  } catch (err) {
    return (err as Error).message;
  }
  return 'accepted';
}

describe('route shapes', () => {
  it('accepts the failover, weighted, windowed and client-specific shapes beside the original one', () => {
    const routes = [
      { prefix: '353', clients: ['acme'], transports: ['carrierA', 'modems'], strategy: 'failover', failoverAfterMs: 5000, name: 'ie-acme' },
      { prefix: '353', transport: 'carrierA' },
      { prefix: '44', transports: [{ name: 'carrierA', weight: 70 }, { name: 'carrierB', weight: 30 }], strategy: 'weighted' },
      { prefix: '', transport: 'modems', window: { from: '08:00', to: '21:00', timeZone: 'Europe/Dublin' } },
    ];
    expect(resolveConfigFromObject({ transports, routes }, 'r.json', {}).routes).toEqual(routes);
  });

  it.each([
    ['an unknown transport in a failover list', [{ prefix: '', transports: ['carrierA', 'carrierC'], strategy: 'failover' }], 'r.json: routes[0].transports[1]: no transport named "carrierC" (configured: carrierA, carrierB, modems)'],
    ['an unknown weighted transport', [{ prefix: '', transports: [{ name: 'nope', weight: 1 }], strategy: 'weighted' }], 'r.json: routes[0].transports[0].name: no transport named "nope" (configured: carrierA, carrierB, modems)'],
    ['a zero weight', [{ prefix: '', transports: [{ name: 'carrierA', weight: 0 }], strategy: 'weighted' }], 'r.json: routes[0].transports[0].weight: must be > 0'],
    ['a negative weight', [{ prefix: '', transports: [{ name: 'carrierA', weight: 70 }, { name: 'carrierB', weight: -30 }], strategy: 'weighted' }], 'r.json: routes[0].transports[1].weight: must be > 0'],
    ['transports without a strategy', [{ prefix: '', transports: ['carrierA'] }], 'r.json: routes[0].strategy: is required with "transports": "failover" or "weighted"'],
    ['an unknown strategy', [{ prefix: '', transports: ['carrierA'], strategy: 'random' }], 'r.json: routes[0].strategy: must be one of "failover", "weighted"'],
    ['both transport and transports', [{ prefix: '', transport: 'carrierA', transports: ['carrierB'], strategy: 'failover' }], 'r.json: routes[0].transport: give either "transport" or "transports", not both'],
    ['neither transport nor transports', [{ prefix: '' }], 'r.json: routes[0].transport: is required (or "transports" with a "strategy")'],
    ['a transport listed twice', [{ prefix: '', transports: ['carrierA', 'carrierA'], strategy: 'failover' }], 'r.json: routes[0].transports[1]: transport "carrierA" is listed twice'],
    ['a window time that is not HH:MM', [{ prefix: '', transport: 'carrierA', window: { from: '8:00', to: '21:00', timeZone: 'UTC' } }], 'r.json: routes[0].window.from: must match pattern "^([01][0-9]|2[0-3]):[0-5][0-9]$"'],
    ['a window hour past 23', [{ prefix: '', transport: 'carrierA', window: { from: '08:00', to: '24:00', timeZone: 'UTC' } }], 'r.json: routes[0].window.to: must match pattern "^([01][0-9]|2[0-3]):[0-5][0-9]$"'],
    ['an unknown time zone', [{ prefix: '', transport: 'carrierA', window: { from: '08:00', to: '21:00', timeZone: 'Europe/Atlantis' } }], 'r.json: routes[0].window.timeZone: unknown time zone "Europe/Atlantis" (an IANA name such as "Europe/Dublin")'],
    ['a window of no length', [{ prefix: '', transport: 'carrierA', window: { from: '08:00', to: '08:00', timeZone: 'UTC' } }], 'r.json: routes[0].window.to: must differ from "from" (08:00): the window would have no length'],
    ['a zero failoverAfterMs', [{ prefix: '', transports: ['carrierA'], strategy: 'failover', failoverAfterMs: 0 }], 'r.json: routes[0].failoverAfterMs: must be >= 1'],
    ['two routes for the same prefix and clients', [{ prefix: '44', clients: ['a', 'b'], transport: 'carrierA' }, { prefix: '44', clients: ['b', 'a'], transport: 'carrierB' }], 'r.json: routes[1].prefix: duplicate route prefix "44" for the same clients'],
    ['an empty client list', [{ prefix: '', clients: [], transport: 'carrierA' }], 'r.json: routes[0].clients: must NOT have fewer than 1 items'],
  ])('refuses %s, naming the key', (_name, routes, message) => {
    expect(rejection(routes)).toBe(message);
  });

  it('names the route client names no client has (config check warns about them)', () => {
    const routes = [{ prefix: '353', clients: ['acme', 'globex'], transport: 'carrierA' }, { prefix: '', transport: 'carrierB' }];
    expect(unknownRouteClients(routes, new Set(['acme']))).toEqual(['routes[0].clients[1]: no client named "globex" in the database (the route applies to nobody until one is created)']);
  });
});

import { describe, expect, it } from 'vitest';
import { RouteTable } from '../../src/engine/routing.js';

describe('RouteTable', () => {
  const table = new RouteTable([
    { prefix: '', transport: 'default' },
    { prefix: '353', transport: 'ireland' },
    { prefix: '35387', transport: 'ireland-87' },
    { prefix: '44', transport: 'uk' },
  ]);

  it.each([
    ['353871234567', 'ireland-87'],
    ['353861234567', 'ireland'],
    ['447700900123', 'uk'],
    ['12025550123', 'default'],
    ['3', 'default'],
  ])('routes %s to %s by the longest prefix', (msisdn, transport) => {
    expect(table.transportFor(msisdn)).toBe(transport);
  });

  it('matches nothing when no route has an empty prefix', () => {
    expect(new RouteTable([{ prefix: '44', transport: 'uk' }]).transportFor('353871234567')).toBeUndefined();
  });

  it('keeps the first listed route among equal prefixes', () => {
    expect(new RouteTable([{ prefix: '44', transport: 'a' }, { prefix: '44', transport: 'b' }]).transportFor('447')).toBe('a');
  });
});

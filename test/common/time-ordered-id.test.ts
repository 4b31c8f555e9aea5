/**
 * src/common/time-ordered-id.ts: RFC 9562 version-7 UUIDs, ascending within the process even in
 * one millisecond or when the clock steps back, so indexes keyed on them take rows in order.
 */
import { describe, expect, it } from 'vitest';
import { timeOrderedUuid } from '../../src/common/time-ordered-id.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('time-ordered UUIDs', () => {
  it('are version 7 with the RFC 9562 variant, carry the millisecond given, and ascend within one millisecond', () => {
    const ms = 1_790_000_000_123;
    const ids = Array.from({ length: 5_000 }, () => timeOrderedUuid(ms));
    for (const id of ids) expect(id).toMatch(V7);
    expect(parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16)).toBe(ms);
    // Past 4,096 ids in one millisecond the counter carries into the next millisecond.
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keep ascending when the clock steps back', () => {
    const later = timeOrderedUuid(1_800_000_000_000);
    const afterStepBack = timeOrderedUuid(1_799_999_999_000);
    expect(afterStepBack > later).toBe(true);
    expect(timeOrderedUuid(1_800_000_000_500) > afterStepBack).toBe(true);
  });
});

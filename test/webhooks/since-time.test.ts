import { describe, expect, it } from 'vitest';
import { parseSinceTime } from '../../src/webhooks/index.js';

describe('parseSinceTime (webhook replay --since)', () => {
  const now = Date.UTC(2026, 10, 21, 15, 0, 0);
  it.each([
    ['90s', now - 90_000], ['30m', now - 1_800_000], ['2h', now - 7_200_000], ['7d', now - 604_800_000], ['0h', now],
    ['2026-11-21T14:00:00Z', Date.UTC(2026, 10, 21, 14)], ['2026-11-21T14:00Z', Date.UTC(2026, 10, 21, 14)],
    ['2026-11-21T15:00:00+01:00', Date.UTC(2026, 10, 21, 14)], ['2026-11-21T14:00:00.250Z', Date.UTC(2026, 10, 21, 14) + 250],
  ])('reads %s', (text, expected) => {
    expect(parseSinceTime(text, now)).toEqual({ ok: true, sinceMs: expected });
  });
  it.each(['', '2', '2 h', '-2h', '2w', 'h', '2026-11-21T14:00:00', '2026-11-21 14:00Z', '2026-11-21', 'yesterday', '2026-13-45T99:00Z'])(
    'refuses %j with a reason', (text) => {
      const result = parseSinceTime(text, now);
      expect(result).toMatchObject({ ok: false, reason: expect.stringMatching(/duration .* ISO-8601/) });
    },
  );
});

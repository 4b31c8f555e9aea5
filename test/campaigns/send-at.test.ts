import { describe, expect, it } from 'vitest';
import { dublinLocalToUtcMs, parseSendAt, type LocalMinute } from '../../src/campaigns/send-at.js';
import { sendAtInstantMs } from '../../src/campaigns/campaign-processor.js';

const local = (raw: string): LocalMinute => {
  const parsed = parseSendAt(raw);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.local;
};
const iso = (ms: number): string => new Date(ms).toISOString();

describe('parseSendAt', () => {
  it.each(['2026-05-01T10:07', '2026-05-01T10:07:00', '2026-05-01 10:07', '2026-05-01 10:07:45'])(
    'reads %s and drops the seconds',
    (raw) => {
      expect(parseSendAt(raw)).toEqual({ ok: true, local: { year: 2026, month: 5, day: 1, hour: 10, minute: 7 } });
    },
  );

  it.each([
    '', ' ', '2026-05-01T10:00Z', '2026-05-01T10:00+01:00', '2026-05-01T10:00:00+0100', '2026-05-01T10:00:00.5',
    '2026-05-01', '10:00', '2026-05-01T1:00', '2026-05-01 10:00 ', '2026/05/01 10:00', '２０２６-05-01T10:00',
  ])('rejects the form %j', (raw) => {
    expect(parseSendAt(raw).ok).toBe(false);
  });

  it.each(['2026-02-29T00:00', '2026-02-30T00:00', '2026-04-31T00:00', '2026-13-01T00:00', '2026-00-01T00:00', '2026-01-00T00:00', '2100-02-29T00:00'])(
    'rejects the date that does not exist: %s',
    (raw) => {
      expect(parseSendAt(raw)).toEqual({ ok: false, reason: 'is not a real calendar date' });
    },
  );

  it.each(['2026-05-01T24:00', '2026-05-01T23:60', '2026-05-01T23:59:60'])('rejects the time that does not exist: %s', (raw) => {
    expect(parseSendAt(raw)).toEqual({ ok: false, reason: 'is not a real time of day' });
  });

  it.each(['2028-02-29T00:00', '2000-02-29T00:00', '0001-01-01T00:00'])('accepts the real date %s', (raw) => {
    expect(parseSendAt(raw).ok).toBe(true);
  });
});

describe('dublinLocalToUtcMs (Europe/Dublin, via luxon zone data)', () => {
  it('reads winter times as GMT (UTC+0)', () => {
    expect(iso(dublinLocalToUtcMs(local('2026-01-15T09:30')))).toBe('2026-01-15T09:30:00.000Z');
  });

  it('reads summer times as Irish Standard Time (UTC+1)', () => {
    expect(iso(dublinLocalToUtcMs(local('2026-07-01T09:30')))).toBe('2026-07-01T08:30:00.000Z');
  });

  it('handles the minutes either side of the spring change (2026-03-29 01:00 GMT -> 02:00 IST)', () => {
    expect(iso(dublinLocalToUtcMs(local('2026-03-29T00:59')))).toBe('2026-03-29T00:59:00.000Z');
    expect(iso(dublinLocalToUtcMs(local('2026-03-29T02:00')))).toBe('2026-03-29T01:00:00.000Z');
  });

  it('moves a time in the spring gap forward past the gap (01:30 becomes 02:30 IST)', () => {
    expect(iso(dublinLocalToUtcMs(local('2026-03-29T01:00')))).toBe('2026-03-29T01:00:00.000Z');
    expect(iso(dublinLocalToUtcMs(local('2026-03-29T01:30')))).toBe('2026-03-29T01:30:00.000Z');
    expect(iso(dublinLocalToUtcMs(local('2027-03-28T01:59')))).toBe('2027-03-28T01:59:00.000Z');
  });

  it('takes the first occurrence of an ambiguous autumn time (2026-10-25 01:30 IST, not GMT)', () => {
    expect(iso(dublinLocalToUtcMs(local('2026-10-25T01:30')))).toBe('2026-10-25T00:30:00.000Z');
    expect(iso(dublinLocalToUtcMs(local('2026-10-25T01:00')))).toBe('2026-10-25T00:00:00.000Z');
    expect(iso(dublinLocalToUtcMs(local('2027-10-31T01:59')))).toBe('2027-10-31T00:59:00.000Z');
  });

  it('handles the minutes either side of the autumn change', () => {
    expect(iso(dublinLocalToUtcMs(local('2026-10-25T00:59')))).toBe('2026-10-24T23:59:00.000Z');
    expect(iso(dublinLocalToUtcMs(local('2026-10-25T02:00')))).toBe('2026-10-25T02:00:00.000Z');
  });
});

describe('sendAtInstantMs', () => {
  it('means now when sendAt was omitted', () => {
    expect(sendAtInstantMs(null, 1_790_000_000_000)).toBe(1_790_000_000_000);
  });

  it('normalises to the start of the minute', () => {
    expect(iso(sendAtInstantMs('2026-07-01 09:30:59', 0))).toBe('2026-07-01T08:30:00.000Z');
  });

  it('keeps a past time as given (the engine sends it at once)', () => {
    expect(iso(sendAtInstantMs('2020-01-01T00:00', Date.UTC(2026, 0, 1)))).toBe('2020-01-01T00:00:00.000Z');
  });
});

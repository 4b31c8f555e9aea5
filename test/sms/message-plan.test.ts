/**
 * Encoding detection, units and parts at the specification's boundaries (GSM-7 160 / 153,
 * UCS-2 70 / 67, extension characters count 2), with the split never breaking an escape pair
 * or a surrogate pair. analyzeText must agree with planMessage every time.
 */
import { describe, expect, test } from 'vitest';
import { SEGMENT_LIMITS, analyzeText, planMessage, type MessagePlan } from '../../src/sms/index.js';

function plan(text: string): MessagePlan {
  const result = planMessage(text);
  const { segments: _segments, ...analysis } = result;
  expect(analyzeText(text)).toEqual(analysis);
  expect(result.segments.join('')).toBe(result.text);
  expect(result.segments).toHaveLength(result.parts);
  return result;
}

const EMOJI = '\u{1F600}';

test('SEGMENT_LIMITS are the specification numbers', () => {
  expect(SEGMENT_LIMITS).toEqual({ gsm7: { single: 160, multi: 153 }, ucs2: { single: 70, multi: 67 } });
});

describe('GSM-7', () => {
  test.each([
    [1, 1],
    [160, 1],
    [161, 2],
    [306, 2],
    [307, 3],
    [459, 3],
    [460, 4],
  ])('%i characters are %i part(s)', (length, parts) => {
    expect(plan('a'.repeat(length))).toMatchObject({ encoding: 'GSM-7', units: length, parts });
  });

  test('161 characters split 153 + 8', () => {
    expect(plan('a'.repeat(161)).segments.map((s) => s.length)).toEqual([153, 8]);
  });

  test('an extension character counts 2 units: 159 + € is 161 units and 2 parts, 158 + € is one', () => {
    expect(plan(`${'a'.repeat(158)}€`)).toMatchObject({ units: 160, parts: 1 });
    expect(plan(`${'a'.repeat(159)}€`)).toMatchObject({ units: 161, parts: 2 });
  });

  test('does not split an escape pair at unit 153/154: the first part carries 152 units', () => {
    const result = plan(`${'a'.repeat(152)}€${'b'.repeat(10)}`);
    expect(result).toMatchObject({ units: 164, parts: 2 });
    expect(result.segments).toEqual(['a'.repeat(152), `€${'b'.repeat(10)}`]);
  });

  test('an escape pair ending exactly at unit 153 stays in the first part', () => {
    const result = plan(`${'a'.repeat(151)}€${'b'.repeat(10)}`);
    expect(result.segments).toEqual([`${'a'.repeat(151)}€`, 'b'.repeat(10)]);
  });

  test('306 units need 3 parts when an escape pair would straddle the first boundary', () => {
    const result = plan(`${'a'.repeat(152)}€${'b'.repeat(152)}`);
    expect(result).toMatchObject({ units: 306, parts: 3 });
    expect(result.segments.map((s) => s.length)).toEqual([152, 152, 1]);
  });

  test('every extension character counts 2', () => {
    expect(plan('^{}\\[~]|€\f')).toMatchObject({ encoding: 'GSM-7', units: 20, parts: 1 });
  });

  test('2,000 characters: 14 parts plain, 27 parts of extension characters (76 per part)', () => {
    expect(plan('a'.repeat(2000))).toMatchObject({ encoding: 'GSM-7', units: 2000, parts: 14 });
    const euros = plan('€'.repeat(2000));
    expect(euros).toMatchObject({ units: 4000, parts: 27 });
    expect(euros.segments[0]).toHaveLength(76);
  });

  test('an empty text is GSM-7, 0 units, 1 part', () => {
    expect(plan('')).toEqual({ encoding: 'GSM-7', units: 0, parts: 1, text: '', segments: [''] });
  });
});

describe('UCS-2', () => {
  test.each([
    [70, 1],
    [71, 2],
    [134, 2],
    [135, 3],
    [201, 3],
    [202, 4],
  ])('%i characters are %i part(s)', (length, parts) => {
    expect(plan('ж'.repeat(length))).toMatchObject({ encoding: 'UCS-2', units: length, parts });
  });

  test('one character outside GSM-7 makes the whole text UCS-2', () => {
    expect(plan(`${'a'.repeat(100)}ç`)).toMatchObject({ encoding: 'UCS-2', units: 101, parts: 2 });
  });

  test('an emoji counts 2 units: 35 emoji are one part, 36 are two', () => {
    expect(plan(EMOJI.repeat(35))).toMatchObject({ units: 70, parts: 1 });
    expect(plan(EMOJI.repeat(36))).toMatchObject({ units: 72, parts: 2 });
  });

  test('does not split a surrogate pair at a part boundary: the first part carries 66 units', () => {
    const result = plan(`${'ж'.repeat(66)}${EMOJI}${'ж'.repeat(5)}`);
    expect(result).toMatchObject({ units: 73, parts: 2 });
    expect(result.segments).toEqual(['ж'.repeat(66), `${EMOJI}${'ж'.repeat(5)}`]);
  });

  test('134 units need 3 parts when a surrogate pair would straddle the first boundary', () => {
    const result = plan(`${'ж'.repeat(66)}${EMOJI}${'ж'.repeat(66)}`);
    expect(result).toMatchObject({ units: 134, parts: 3 });
    expect(result.segments.map((s) => s.length)).toEqual([66, 67, 1]);
  });

  test('2,000 characters: 30 parts; 1,000 emoji (2,000 units, 33 per part): 31 parts', () => {
    expect(plan('ж'.repeat(2000))).toMatchObject({ units: 2000, parts: 30 });
    expect(plan(EMOJI.repeat(1000))).toMatchObject({ units: 2000, parts: 31 });
  });

  test('a lone surrogate is one unit and may sit anywhere', () => {
    expect(plan('\ud83d'.repeat(71))).toMatchObject({ encoding: 'UCS-2', units: 71, parts: 2 });
  });
});

describe('16-bit concatenation reference', () => {
  test('leaves 152 GSM-7 / 66 UCS-2 units per part (one more UDH octet)', () => {
    expect(planMessage('a'.repeat(305), { concatReferenceBits: 16 }).segments.map((s) => s.length)).toEqual([152, 152, 1]);
    expect(planMessage('ж'.repeat(133), { concatReferenceBits: 16 }).segments.map((s) => s.length)).toEqual([66, 66, 1]);
    expect(analyzeText('a'.repeat(160), { concatReferenceBits: 16 }).parts).toBe(1);
    expect(analyzeText('a'.repeat(305), { concatReferenceBits: 16 }).parts).toBe(3);
  });
});

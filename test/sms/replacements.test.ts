/** The specification's replacements ("Message text rules"), applied before encoding detection. */
import { describe, expect, test } from 'vitest';
import { analyzeText, applyReplacements, planMessage } from '../../src/sms/index.js';

describe('applyReplacements', () => {
  test.each([
    ['\u2018', "'", 'LEFT SINGLE QUOTATION MARK'],
    ['\u2019', "'", 'RIGHT SINGLE QUOTATION MARK'],
    ['\u201a', "'", 'SINGLE LOW-9 QUOTATION MARK'],
    ['\u201b', "'", 'SINGLE HIGH-REVERSED-9 QUOTATION MARK'],
    ['\u201c', '"', 'LEFT DOUBLE QUOTATION MARK'],
    ['\u201d', '"', 'RIGHT DOUBLE QUOTATION MARK'],
    ['\u201e', '"', 'DOUBLE LOW-9 QUOTATION MARK'],
    ['\u201f', '"', 'DOUBLE HIGH-REVERSED-9 QUOTATION MARK'],
    ['\u2013', '-', 'EN DASH'],
    ['\u2014', '-', 'EM DASH'],
    ['\u2026', '.', 'HORIZONTAL ELLIPSIS'],
    ['\u2022', '*', 'BULLET'],
  ])('%s becomes %s (%s)', (from, to) => {
    expect(applyReplacements(`a${from}b${from}`)).toBe(`a${to}b${to}`);
  });

  test('leaves every other character alone, including near neighbours of the replaced ones', () => {
    const untouched = 'plain \u2012\u2015\u2020\u2023\u2025\u2027 «»‹› 😀 ç';
    expect(applyReplacements(untouched)).toBe(untouched);
  });

  test('a replaced text is GSM-7 where the original would have needed UCS-2', () => {
    const raw = '\u201cSale\u201d \u2013 it\u2019s on\u2026 \u2022 today';
    expect(analyzeText(raw)).toEqual({ encoding: 'GSM-7', units: 25, parts: 1, text: '"Sale" - it\'s on. * today' });
  });

  test('replacement happens before counting: 160 typographic quotes are one GSM-7 part', () => {
    const plan = planMessage('\u2019'.repeat(160));
    expect(plan).toMatchObject({ encoding: 'GSM-7', units: 160, parts: 1 });
    expect(plan.segments).toEqual(["'".repeat(160)]);
  });
});

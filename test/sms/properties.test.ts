/**
 * Properties over generated texts: parts join back to the text, each part fits its limit, no
 * escape or surrogate pair is broken, analyzeText counts what planMessage splits, and the encoded
 * parts carry exactly the text.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  analyzeText,
  decodeGsm7Septets,
  decodeUcs2,
  encodeGsm7Septets,
  encodeParts,
  GSM7_DEFAULT_EXTENSION,
  GSM7_DEFAULT_TABLE,
  packUserData,
  planMessage,
  unpackSeptets,
  type NationalLanguage,
  type SmsOptions,
} from '../../src/sms/index.js';

const gsmBasic = [...GSM7_DEFAULT_TABLE].filter((c) => c !== '\u001b');
const gsmExtension = GSM7_DEFAULT_EXTENSION.map(([, c]) => c);
const typographic = ['\u2018', '\u2019', '\u201c', '\u201d', '\u2013', '\u2014', '\u2026', '\u2022'];
const nonGsm = ['ж', 'ç', 'ş', 'ğ', 'ı', 'İ', 'á', 'í', 'ó', 'ú', 'ã', 'õ', 'ê', '`', '中'];
const emoji = ['\u{1F600}', '\u{1F44D}', '\u{1F1EE}\u{1F1EA}'];

/** Texts that lean on the interesting cases: long runs near boundaries, extension chars, emoji. */
const textArbitrary = (alphabet: string[]): fc.Arbitrary<string> =>
  fc.array(fc.constantFrom(...alphabet), { maxLength: 700 }).map((chars) => chars.join(''));

const gsmText = textArbitrary([...gsmBasic, ...gsmExtension, ...gsmExtension, ...typographic]);
const mixedText = fc.oneof(
  gsmText,
  textArbitrary([...gsmBasic, ...gsmExtension, ...nonGsm, ...emoji]),
  textArbitrary([...nonGsm, ...emoji, 'a']),
  fc.string({ unit: 'grapheme', maxLength: 400 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
);
const options = fc.record(
  {
    nationalLanguages: fc.subarray<NationalLanguage>(['turkish', 'spanish', 'portuguese']),
    concatReferenceBits: fc.constantFrom<8 | 16>(8, 16),
  },
  { requiredKeys: [] },
);

function unitsOf(segment: string, encoding: string, shift: { single?: NationalLanguage; locking?: NationalLanguage }): number {
  return encoding === 'GSM-7' ? encodeGsm7Septets(segment, shift).length : segment.length;
}

function capacity(encoding: string, parts: number, shiftIes: number, referenceBits: 8 | 16): number {
  const ieOctets = (parts > 1 ? (referenceBits === 8 ? 5 : 6) : 0) + 3 * shiftIes;
  const udhOctets = ieOctets === 0 ? 0 : ieOctets + 1;
  return encoding === 'GSM-7' ? Math.floor(((140 - udhOctets) * 8) / 7) : Math.floor((140 - udhOctets) / 2);
}

describe('planMessage / analyzeText properties', () => {
  test('segments join to the text, fit their limit, keep pairs whole, and agree with analyzeText', () => {
    fc.assert(
      fc.property(mixedText, options, (raw, smsOptions: SmsOptions) => {
        const plan = planMessage(raw, smsOptions);
        const analysis = analyzeText(raw, smsOptions);
        expect(analysis).toEqual({ encoding: plan.encoding, units: plan.units, parts: plan.parts, text: plan.text });
        expect(plan.segments.join('')).toBe(plan.text);
        expect(plan.segments).toHaveLength(plan.parts);

        const shift = { single: plan.singleShift, locking: plan.lockingShift };
        const shiftIes = (plan.singleShift === undefined ? 0 : 1) + (plan.lockingShift === undefined ? 0 : 1);
        const limit = capacity(plan.encoding, plan.parts, shiftIes, smsOptions.concatReferenceBits ?? 8);
        const segmentUnits = plan.segments.map((segment) => unitsOf(segment, plan.encoding, shift));
        expect(segmentUnits.reduce((a, b) => a + b, 0)).toBe(plan.units);
        for (const units of segmentUnits) expect(units).toBeLessThanOrEqual(limit);
        // Greedy: a part is only cut early by the width of the pair that did not fit.
        segmentUnits.slice(0, -1).forEach((units) => expect(units).toBeGreaterThanOrEqual(limit - 1));
        for (let i = 0; i + 1 < plan.segments.length; i++) {
          const before = plan.segments[i] ?? '';
          const after = plan.segments[i + 1] ?? '';
          const highLast = /[\ud800-\udbff]$/.test(before);
          const lowFirst = /^[\udc00-\udfff]/.test(after);
          expect(highLast && lowFirst).toBe(false);
        }
        if (smsOptions.nationalLanguages === undefined || smsOptions.nationalLanguages.length === 0) {
          expect(plan.singleShift).toBeUndefined();
          expect(plan.lockingShift).toBeUndefined();
        }
      }),
      { numRuns: 1500 },
    );
  });

  test('GSM-7 is chosen exactly when every character (after replacements) is in the default tables', () => {
    fc.assert(
      fc.property(mixedText, (raw) => {
        const { encoding, text } = analyzeText(raw);
        const encodable = [...text].every((c) => gsmBasic.includes(c) || gsmExtension.includes(c));
        expect(encoding).toBe(encodable ? 'GSM-7' : 'UCS-2');
      }),
      { numRuns: 500 },
    );
  });

  test('encoded and packed parts carry exactly the text', () => {
    fc.assert(
      fc.property(mixedText, options, fc.integer({ min: 0, max: 255 }), (raw, smsOptions: SmsOptions, reference) => {
        const plan = planMessage(raw, smsOptions);
        if (plan.parts > 255) return;
        const referenceBits = smsOptions.concatReferenceBits ?? 8;
        const shift = { single: plan.singleShift, locking: plan.lockingShift };
        const parts = encodeParts(plan, { reference, referenceBits });
        const texts = parts.map((part) => {
          const { userData, udl } = packUserData(part, plan.encoding);
          expect(userData.length).toBeLessThanOrEqual(140);
          const udhOctets = part.udh?.length ?? 0;
          if (plan.encoding === 'UCS-2') return decodeUcs2(userData.subarray(udhOctets, udl));
          const headerSeptets = Math.ceil((udhOctets * 8) / 7);
          const septets = unpackSeptets(userData.subarray(udhOctets), udl - headerSeptets, headerSeptets * 7 - udhOctets * 8);
          return decodeGsm7Septets(septets, shift);
        });
        expect(texts.join('')).toBe(plan.text);
      }),
      { numRuns: 500 },
    );
  });
});

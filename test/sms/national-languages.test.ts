/**
 * National language shift tables (3GPP TS 23.038 Annex A) used only when enabled, with UDH IEs
 * 0x24 / 0x25 (TS 23.040 §9.2.3.24.15/16) and part room computed from the UDH length.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  analyzeText,
  decodeGsm7Septets,
  encodeGsm7Septets,
  encodeParts,
  GSM7_DEFAULT_TABLE,
  NATIONAL_LANGUAGE_TABLES,
  packUserData,
  planMessage,
  unpackSeptets,
  type NationalLanguage,
} from '../../src/sms/index.js';

const hex = (octets: Uint8Array | null): string => (octets === null ? 'null' : Buffer.from(octets).toString('hex').toUpperCase());
const LANGUAGES: NationalLanguage[] = ['turkish', 'spanish', 'portuguese'];

describe('Annex A tables', () => {
  test.each([
    // [language, table, septet, code point] spot checks transcribed from TS 23.038 Annex A
    ['turkish', 'locking', 0x04, 0x20ac],
    ['turkish', 'locking', 0x07, 0x0131],
    ['turkish', 'locking', 0x0b, 0x011e],
    ['turkish', 'locking', 0x0c, 0x011f],
    ['turkish', 'locking', 0x1c, 0x015e],
    ['turkish', 'locking', 0x1d, 0x015f],
    ['turkish', 'locking', 0x40, 0x0130],
    ['turkish', 'locking', 0x60, 0x00e7],
    ['portuguese', 'locking', 0x04, 0x00ea],
    ['portuguese', 'locking', 0x12, 0x00aa],
    ['portuguese', 'locking', 0x15, 0x221e],
    ['portuguese', 'locking', 0x24, 0x00ba],
    ['portuguese', 'locking', 0x60, 0x007e],
    ['portuguese', 'locking', 0x7d, 0x0060],
  ] as const)('%s %s table has septet %i = code point %i', (language, _table, septet, codePoint) => {
    expect(NATIONAL_LANGUAGE_TABLES[language].locking?.codePointAt(septet)).toBe(codePoint);
  });

  test.each([
    ['turkish', 0x47, 'Ğ'],
    ['turkish', 0x49, 'İ'],
    ['turkish', 0x53, 'Ş'],
    ['turkish', 0x63, 'ç'],
    ['turkish', 0x67, 'ğ'],
    ['turkish', 0x69, 'ı'],
    ['turkish', 0x73, 'ş'],
    ['spanish', 0x09, 'ç'],
    ['spanish', 0x41, 'Á'],
    ['spanish', 0x61, 'á'],
    ['spanish', 0x75, 'ú'],
    ['portuguese', 0x05, 'ê'],
    ['portuguese', 0x1f, 'Ê'],
    ['portuguese', 0x5b, 'Ã'],
    ['portuguese', 0x7f, 'â'],
  ] as const)('%s single shift: ESC %i is %s', (language, code, character) => {
    expect(NATIONAL_LANGUAGE_TABLES[language].singleShift).toContainEqual([code, character]);
    expect(Array.from(encodeGsm7Septets(character, { single: language }))).toEqual([0x1b, code]);
  });

  test('a character in both the main and the single shift table takes the one-septet main form', () => {
    expect(NATIONAL_LANGUAGE_TABLES.portuguese.singleShift).toContainEqual([0x12, 'Φ']);
    expect(Array.from(encodeGsm7Septets('Φ', { single: 'portuguese' }))).toEqual([0x12]);
    expect(decodeGsm7Septets(Uint8Array.of(0x1b, 0x12), { single: 'portuguese' })).toBe('Φ');
  });

  test('Spanish has no locking shift table in Annex A', () => {
    expect(NATIONAL_LANGUAGE_TABLES.spanish.locking).toBeUndefined();
    expect(() => encodeGsm7Septets('a', { locking: 'spanish' })).toThrow(expect.objectContaining({ code: 'SMS_NO_LOCKING_TABLE' }));
  });

  test.each(LANGUAGES.filter((l) => NATIONAL_LANGUAGE_TABLES[l].locking !== undefined))(
    'every character of the %s locking table round-trips',
    (language) => {
      const table = NATIONAL_LANGUAGE_TABLES[language].locking ?? '';
      expect(table).toHaveLength(128);
      const text = [...table].filter((_c, septet) => septet !== 0x1b).join('');
      const septets = encodeGsm7Septets(text, { locking: language });
      expect(Array.from(septets)).toEqual([...Array(128).keys()].filter((s) => s !== 0x1b));
      expect(decodeGsm7Septets(septets, { locking: language })).toBe(text);
    },
  );

  test.each(LANGUAGES)('every character of the %s single shift table round-trips (with the default or its locking table)', (language) => {
    for (const locking of [undefined, NATIONAL_LANGUAGE_TABLES[language].locking === undefined ? undefined : language]) {
      const shift = { single: language, locking };
      const text = NATIONAL_LANGUAGE_TABLES[language].singleShift.map(([, c]) => c).join('');
      expect(decodeGsm7Septets(encodeGsm7Septets(text, shift), shift)).toBe(text);
    }
  });

  test('the single shift table replaces the default extension: the default alphabet still encodes alongside it', () => {
    const text = [...GSM7_DEFAULT_TABLE].filter((c) => c !== '\u001b').join('') + 'ş€{';
    expect(decodeGsm7Septets(encodeGsm7Septets(text, { single: 'turkish' }), { single: 'turkish' })).toBe(text);
  });
});

describe('planning with national tables', () => {
  test('off by default: Turkish text is UCS-2', () => {
    expect(planMessage('ş'.repeat(100))).toMatchObject({ encoding: 'UCS-2', parts: 2 });
    expect(planMessage('ş'.repeat(100)).lockingShift).toBeUndefined();
  });

  test('Turkish locking shift: 155 septets fit one part (UDH 03 25 01 01), 156 need 149 + 7', () => {
    const one = planMessage('ş'.repeat(155), { nationalLanguages: ['turkish'] });
    expect(one).toMatchObject({ encoding: 'GSM-7', units: 155, parts: 1, lockingShift: 'turkish' });
    expect(one.singleShift).toBeUndefined();
    const [part] = encodeParts(one, { reference: 1, referenceBits: 8 });
    expect(hex(part?.udh ?? null)).toBe('03250101');
    const { userData, udl } = packUserData(part!, 'GSM-7');
    expect(udl).toBe(5 + 155); // 4 UDH octets + 3 fill bits = 5 septets
    expect(userData).toHaveLength(140);
    expect(decodeGsm7Septets(unpackSeptets(userData.subarray(4), 155, 3), { locking: 'turkish' })).toBe('ş'.repeat(155));

    const two = planMessage('ş'.repeat(156), { nationalLanguages: ['turkish'] });
    expect(two).toMatchObject({ parts: 2, lockingShift: 'turkish' });
    expect(two.segments.map((s) => s.length)).toEqual([149, 7]);
    expect(analyzeText('ş'.repeat(156), { nationalLanguages: ['turkish'] })).toMatchObject({ encoding: 'GSM-7', units: 156, parts: 2 });
    expect(encodeParts(two, { reference: 0xab, referenceBits: 8 }).map((p) => hex(p.udh))).toEqual(['080003AB0201250101', '080003AB0202250101']);
  });

  test('Spanish single shift: accents count 2 and the UDH carries 24 01 02', () => {
    const text = `${'a'.repeat(100)}${'á'.repeat(50)}`; // 200 septets: 2 parts, UCS-2 would be 3
    const plan = planMessage(text, { nationalLanguages: ['spanish'] });
    expect(plan).toMatchObject({ encoding: 'GSM-7', units: 200, parts: 2, singleShift: 'spanish' });
    expect(plan.segments.map((s) => s.length)).toEqual([100 + 24, 26]); // 100 + 24*2 = 148, next á does not fit 149
    expect(encodeParts(plan, { reference: 5, referenceBits: 8 }).map((p) => hex(p.udh))).toEqual(['08000305020124010' + '2', '08000305020224010' + '2']);
  });

  test('single and locking shift together: 152 septets fit one part, then 146 per part', () => {
    const options = { nationalLanguages: ['turkish', 'spanish'] as NationalLanguage[] };
    const one = planMessage(`${'ş'.repeat(150)}á`, options);
    expect(one).toMatchObject({ encoding: 'GSM-7', units: 152, parts: 1, lockingShift: 'turkish', singleShift: 'spanish' });
    expect(hex(encodeParts(one, { reference: 1, referenceBits: 8 })[0]?.udh ?? null)).toBe('06240102250101');
    const two = planMessage(`${'ş'.repeat(151)}á`, options);
    expect(two.parts).toBe(2);
    expect(two.segments.map((s) => s.length)).toEqual([146, 6]);
  });

  test('a tie with UCS-2 keeps UCS-2 (every handset can show it)', () => {
    expect(planMessage('ş'.repeat(10), { nationalLanguages: ['turkish'] })).toMatchObject({ encoding: 'UCS-2', parts: 1 });
    expect(planMessage('á'.repeat(100), { nationalLanguages: ['spanish'] })).toMatchObject({ encoding: 'UCS-2', parts: 2 });
  });

  test('default GSM-7 text never takes a shift even when languages are enabled', () => {
    const plan = planMessage('a'.repeat(400), { nationalLanguages: LANGUAGES });
    expect(plan).toMatchObject({ encoding: 'GSM-7', parts: 3 });
    expect(plan.singleShift).toBeUndefined();
    expect(plan.lockingShift).toBeUndefined();
  });

  test('property: national texts split within their room and the parts decode back to the text', () => {
    const alphabet = [...'abcçğışşİĞŞáéíóúñãõêâÁÍÓÚ €{|~0123456789'];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...alphabet), { maxLength: 600 }).map((a) => a.join('')),
        fc.subarray(LANGUAGES, { minLength: 1 }),
        (text, languages) => {
          const plan = planMessage(text, { nationalLanguages: languages });
          expect(analyzeText(text, { nationalLanguages: languages })).toEqual({ encoding: plan.encoding, units: plan.units, parts: plan.parts, text });
          expect(plan.parts).toBeLessThanOrEqual(planMessage(text).parts);
          const shift = { single: plan.singleShift, locking: plan.lockingShift };
          const decoded = encodeParts(plan, { reference: 3, referenceBits: 8 }).map((part) => {
            const { userData, udl } = packUserData(part, plan.encoding);
            const udhOctets = part.udh?.length ?? 0;
            if (plan.encoding === 'UCS-2') return Buffer.from(userData.subarray(udhOctets)).swap16().toString('utf16le');
            const headerSeptets = Math.ceil((udhOctets * 8) / 7);
            return decodeGsm7Septets(unpackSeptets(userData.subarray(udhOctets), udl - headerSeptets, headerSeptets * 7 - udhOctets * 8), shift);
          });
          expect(decoded.join('')).toBe(text);
        },
      ),
      { numRuns: 500 },
    );
  });
});

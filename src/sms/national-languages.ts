/**
 * National language shift tables of 3GPP TS 23.038 Annex A, for the languages smsgate supports.
 * They are used only when a caller enables them (SmsOptions.nationalLanguages): a locking shift
 * table replaces the default alphabet, a single shift table replaces the default extension
 * table, and the receiving handset learns which through UDH IEs 0x25 / 0x24 (TS 23.040
 * §9.2.3.24.15 / §9.2.3.24.16).
 */
import { GSM7_DEFAULT_EXTENSION } from './gsm7-alphabet.js';

export type NationalLanguage = 'turkish' | 'spanish' | 'portuguese';

/** TS 23.038 §6.2.1.2.4: national language identifiers carried in the shift IEs. */
export const NATIONAL_LANGUAGE_ID: Readonly<Record<NationalLanguage, number>> = {
  turkish: 0x01,
  spanish: 0x02,
  portuguese: 0x03,
};

export interface NationalLanguageTables {
  /** Annex A.3 locking shift table indexed by septet (0x1B is the escape placeholder); absent when Annex A defines none. */
  readonly locking?: string;
  /** Annex A.2 single shift table as [septet, character] pairs, reached by ESC. */
  readonly singleShift: ReadonlyArray<readonly [septet: number, character: string]>;
}

/** Every Annex A.2 table below also carries the default extension characters (§6.2.1.1) at the same codes. */
const COMMON_SINGLE_SHIFT = GSM7_DEFAULT_EXTENSION;

export const NATIONAL_LANGUAGE_TABLES: Readonly<Record<NationalLanguage, NationalLanguageTables>> = {
  turkish: {
    // TS 23.038 A.3.1 Turkish National Language Locking Shift Table
    locking:
      '@£$¥€éùıòÇ\nĞğ\rÅå' +
      'Δ_ΦΓΛΩΠΨΣΘΞ\u001bŞşßÉ' +
      ' !"#¤%&\'()*+,-./' +
      '0123456789:;<=>?' +
      'İABCDEFGHIJKLMNO' +
      'PQRSTUVWXYZÄÖÑÜ§' +
      'çabcdefghijklmno' +
      'pqrstuvwxyzäöñüà',
    // TS 23.038 A.2.1 Turkish National Language Single Shift Table
    singleShift: [
      ...COMMON_SINGLE_SHIFT,
      [0x47, 'Ğ'],
      [0x49, 'İ'],
      [0x53, 'Ş'],
      [0x63, 'ç'],
      [0x67, 'ğ'],
      [0x69, 'ı'],
      [0x73, 'ş'],
    ],
  },
  spanish: {
    // TS 23.038 A.2.2 Spanish National Language Single Shift Table (Annex A defines no Spanish locking table)
    singleShift: [
      ...COMMON_SINGLE_SHIFT,
      [0x09, 'ç'],
      [0x41, 'Á'],
      [0x49, 'Í'],
      [0x4f, 'Ó'],
      [0x55, 'Ú'],
      [0x61, 'á'],
      [0x69, 'í'],
      [0x6f, 'ó'],
      [0x75, 'ú'],
    ],
  },
  portuguese: {
    // TS 23.038 A.3.3 Portuguese National Language Locking Shift Table
    locking:
      '@£$¥êéúíóç\nÔô\rÁá' +
      'Δ_ªÇÀ∞^\\€Ó|\u001bÂâÊÉ' +
      ' !"#º%&\'()*+,-./' +
      '0123456789:;<=>?' +
      'ÍABCDEFGHIJKLMNO' +
      'PQRSTUVWXYZÃÕÚÜ§' +
      '~abcdefghijklmno' +
      'pqrstuvwxyzãõ`üà',
    // TS 23.038 A.2.3 Portuguese National Language Single Shift Table
    singleShift: [
      ...COMMON_SINGLE_SHIFT,
      [0x05, 'ê'],
      [0x09, 'ç'],
      [0x0b, 'Ô'],
      [0x0c, 'ô'],
      [0x0e, 'Á'],
      [0x0f, 'á'],
      [0x12, 'Φ'],
      [0x13, 'Γ'],
      [0x15, 'Ω'],
      [0x16, 'Π'],
      [0x17, 'Ψ'],
      [0x18, 'Σ'],
      [0x19, 'Θ'],
      [0x1f, 'Ê'],
      [0x41, 'À'],
      [0x49, 'Í'],
      [0x4f, 'Ó'],
      [0x55, 'Ú'],
      [0x5b, 'Ã'],
      [0x5c, 'Õ'],
      [0x61, 'Â'],
      [0x69, 'í'],
      [0x6f, 'ó'],
      [0x75, 'ú'],
      [0x7b, 'ã'],
      [0x7c, 'õ'],
      [0x7f, 'â'],
    ],
  },
};

export function isNationalLanguage(value: string): value is NationalLanguage {
  return Object.hasOwn(NATIONAL_LANGUAGE_TABLES, value);
}

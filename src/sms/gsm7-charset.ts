/**
 * Lookup structures for one GSM 7 bit character set: the default alphabet or a national locking
 * shift table as the main table, plus the default extension or a national single shift table.
 * Encoding runs for every message, so it is one Int16Array indexed by UTF-16 code unit.
 */
import { GatewayError } from '../common/errors.js';
import { GSM7_DEFAULT_EXTENSION, GSM7_DEFAULT_TABLE, GSM7_ESCAPE } from './gsm7-alphabet.js';
import { NATIONAL_LANGUAGE_TABLES, type NationalLanguage } from './national-languages.js';

/** Which national tables are active; both absent means the default alphabet and extension. */
export interface Gsm7Shift {
  single?: NationalLanguage;
  locking?: NationalLanguage;
}

/** Marks an encode-table entry as reached through ESC; the low 7 bits are the extension code. */
export const EXTENSION_FLAG = 0x80;
/** Encode-table entry of a code unit that the character set cannot represent. */
export const NOT_ENCODABLE = -1;

export interface Gsm7Charset {
  /**
   * Indexed by UTF-16 code unit: the septet (0..127) in the main table, or EXTENSION_FLAG | code
   * for ESC + code, or NOT_ENCODABLE. Units of a character are therefore 1 + (entry >> 7).
   */
  readonly encode: Int16Array;
  /** Main table by septet; '' at the escape. */
  readonly main: readonly string[];
  /** Extension table by code; '' where the table defines no character. */
  readonly extension: readonly string[];
}

const cache = new Map<string, Gsm7Charset>();

function buildCharset(shift: Gsm7Shift): Gsm7Charset {
  const mainTable = shift.locking === undefined ? GSM7_DEFAULT_TABLE : NATIONAL_LANGUAGE_TABLES[shift.locking].locking;
  if (mainTable === undefined) {
    throw new GatewayError('SMS_NO_LOCKING_TABLE', `TS 23.038 Annex A defines no locking shift table for ${shift.locking ?? ''}`, {
      details: { language: shift.locking },
    });
  }
  const extensionPairs = shift.single === undefined ? GSM7_DEFAULT_EXTENSION : NATIONAL_LANGUAGE_TABLES[shift.single].singleShift;
  const encode = new Int16Array(0x10000).fill(NOT_ENCODABLE);
  const main = Array.from(mainTable, (character, septet) => (septet === GSM7_ESCAPE ? '' : character));
  const extension = new Array<string>(128).fill('');
  for (const [code, character] of extensionPairs) {
    extension[code] = character;
    encode[character.charCodeAt(0)] = EXTENSION_FLAG | code;
  }
  // A character present in both tables takes the one-septet main form; written last so it wins.
  main.forEach((character, septet) => {
    if (character !== '') encode[character.charCodeAt(0)] = septet;
  });
  return { encode, main, extension };
}

/** The (cached) character set for a shift combination; SMS_NO_LOCKING_TABLE for a locking table Annex A lacks. */
export function gsm7Charset(shift?: Gsm7Shift): Gsm7Charset {
  const key = `${shift?.locking ?? ''}/${shift?.single ?? ''}`;
  let charset = cache.get(key);
  if (charset === undefined) {
    charset = buildCharset(shift ?? {});
    cache.set(key, charset);
  }
  return charset;
}

/** The default alphabet with its extension table, built once at load: the hot path of every message. */
export const DEFAULT_GSM7_CHARSET: Gsm7Charset = gsm7Charset();

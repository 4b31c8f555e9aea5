/**
 * The GSM 7 bit default alphabet and its extension table, exactly as 3GPP TS 23.038 §6.2.1 and
 * §6.2.1.1 give them. These are protocol facts kept as tables; the lookup structures built from
 * them live in gsm7-charset.ts.
 */

/** Septet value of the escape to the extension table (TS 23.038 §6.2.1, code 0x1B). */
export const GSM7_ESCAPE = 0x1b;

/**
 * TS 23.038 §6.2.1: the default alphabet indexed by septet value (128 entries). Index 0x1B is the
 * escape and holds U+001B only as a placeholder: it never encodes or decodes a character.
 * 0x09 is LATIN CAPITAL LETTER C WITH CEDILLA (the table's note: not the small letter).
 * 0x24 is the CURRENCY SIGN ¤, the dollar sign is 0x02.
 */
export const GSM7_DEFAULT_TABLE =
  '@£$¥èéùìòÇ\nØø\rÅå' +
  'Δ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ' +
  ' !"#¤%&\'()*+,-./' +
  '0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNO' +
  'PQRSTUVWXYZÄÖÑÜ§' +
  '¿abcdefghijklmno' +
  'pqrstuvwxyzäöñüà';

/**
 * TS 23.038 §6.2.1.1: the default alphabet extension table, reached by ESC (0x1B) then the code.
 * 0x0D (CR2, a page break for display) and 0x1B (escape to a further table) carry no character.
 */
export const GSM7_DEFAULT_EXTENSION: ReadonlyArray<readonly [septet: number, character: string]> = [
  [0x0a, '\f'],
  [0x14, '^'],
  [0x28, '{'],
  [0x29, '}'],
  [0x2f, '\\'],
  [0x3c, '['],
  [0x3d, '~'],
  [0x3e, ']'],
  [0x40, '|'],
  [0x65, '€'],
];

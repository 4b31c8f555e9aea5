/**
 * GSM 7 bit text to septets and back (3GPP TS 23.038 §6.2.1). Septets are one value (0..127)
 * per byte, unpacked; extension characters are ESC (0x1B) followed by their code.
 */
import { GatewayError } from '../common/errors.js';
import { GSM7_ESCAPE } from './gsm7-alphabet.js';
import { EXTENSION_FLAG, gsm7Charset, type Gsm7Shift } from './gsm7-charset.js';

function describeCharacter(text: string, index: number): { character: string; codePoint: string } {
  const codePoint = text.codePointAt(index) ?? 0;
  return { character: String.fromCodePoint(codePoint), codePoint: `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}` };
}

/** Encodes text to unpacked septets; a character outside the tables throws SMS_NOT_GSM7 naming it. */
export function encodeGsm7Septets(text: string, shift?: Gsm7Shift): Uint8Array {
  const { encode } = gsm7Charset(shift);
  let septetCount = 0;
  for (let i = 0; i < text.length; i++) {
    const entry = encode[text.charCodeAt(i)] as number;
    if (entry < 0) {
      const { character, codePoint } = describeCharacter(text, i);
      throw new GatewayError('SMS_NOT_GSM7', `character '${character}' (${codePoint}) at index ${i} is not in the GSM 7 bit alphabet`, {
        details: { character, codePoint, index: i },
      });
    }
    septetCount += 1 + (entry >> 7);
  }
  const septets = new Uint8Array(septetCount);
  let out = 0;
  for (let i = 0; i < text.length; i++) {
    const entry = encode[text.charCodeAt(i)] as number;
    if (entry >= EXTENSION_FLAG) {
      septets[out++] = GSM7_ESCAPE;
      septets[out++] = entry & 0x7f;
    } else {
      septets[out++] = entry;
    }
  }
  return septets;
}

/**
 * Decodes unpacked septets. Following TS 23.038 §6.2.1.1: ESC followed by a code the extension
 * table leaves undefined shows the main table's character for that code, and ESC ESC (reserved
 * for a further extension table) shows a space. A trailing ESC with no code after it shows a
 * space for the same reason. A value above 127 is not a septet: SMS_BAD_SEPTET.
 */
export function decodeGsm7Septets(septets: Uint8Array, shift?: Gsm7Shift): string {
  const { main, extension } = gsm7Charset(shift);
  let text = '';
  for (let i = 0; i < septets.length; i++) {
    const septet = septets[i] as number;
    if (septet > 0x7f) {
      throw new GatewayError('SMS_BAD_SEPTET', `septet ${i} has value ${septet}, above 127`, { details: { index: i, value: septet } });
    }
    if (septet !== GSM7_ESCAPE) {
      text += main[septet] as string;
      continue;
    }
    const code = septets[++i];
    if (code === undefined || code === GSM7_ESCAPE) {
      text += ' ';
    } else if (code > 0x7f) {
      throw new GatewayError('SMS_BAD_SEPTET', `septet ${i} has value ${code}, above 127`, { details: { index: i, value: code } });
    } else {
      text += (extension[code] as string) || (main[code] as string);
    }
  }
  return text;
}

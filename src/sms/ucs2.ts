/**
 * UCS-2 user data as SMS carries it: UTF-16 big-endian code units (3GPP TS 23.038 §6.2.3;
 * handsets in practice decode UTF-16, so a surrogate pair travels as two code units).
 */
import { GatewayError } from '../common/errors.js';

/** Encodes every UTF-16 code unit of the text as two octets, most significant first. */
export function encodeUcs2(text: string): Uint8Array {
  const octets = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    const codeUnit = text.charCodeAt(i);
    octets[2 * i] = codeUnit >>> 8;
    octets[2 * i + 1] = codeUnit & 0xff;
  }
  return octets;
}

/** Decodes UTF-16BE octets; an odd octet count is a coded failure, never a dropped octet. */
export function decodeUcs2(octets: Uint8Array): string {
  if (octets.length % 2 !== 0) {
    throw new GatewayError('SMS_BAD_UCS2', `UCS-2 data has an odd number of octets (${octets.length})`, {
      details: { octets: octets.length },
    });
  }
  let text = '';
  for (let i = 0; i < octets.length; i += 2) {
    text += String.fromCharCode(((octets[i] as number) << 8) | (octets[i + 1] as number));
  }
  return text;
}

/**
 * Message id normalisation, so a receipt's id matches the id its submit_sm_resp gave.
 *
 * Carriers differ in the form of the id: some return a hex id in submit_sm_resp and a decimal id
 * in the receipt text (SMPP 3.4 Appendix B leaves the receipt id's form to the SMSC), some the
 * reverse. Like Kannel's `msg-id-type`, the carrier config names the conversion; it is applied
 * to the RECEIPT's id so it takes the submit_sm_resp form. Both ids then go through the same
 * canonical form: upper-case, leading zeros removed ("0" stays "0").
 */

export type MessageIdMode = 'as-is' | 'hex-to-dec' | 'dec-to-hex';

export const MESSAGE_ID_MODES: readonly MessageIdMode[] = ['as-is', 'hex-to-dec', 'dec-to-hex'];

const HEX_DIGITS = /^[0-9a-fA-F]+$/;
const DEC_DIGITS = /^[0-9]+$/;

function canonical(id: string): string {
  const upper = id.trim().toUpperCase();
  const stripped = upper.replace(/^0+/, '');
  return stripped.length === 0 && upper.length > 0 ? '0' : stripped;
}

/**
 * Canonical form of a message id for matching. `mode` converts the number base (BigInt, so ids
 * longer than 2^53 convert exactly); an id that is not a number in the source base (for example
 * a hex id that contains letters given to 'dec-to-hex') cannot be converted and stays as it is,
 * in canonical form, so it still matches an identical id.
 *
 * Use 'as-is' for submit_sm_resp ids and the carrier's mode for receipt ids.
 */
export function normalizeMessageId(id: string, mode: MessageIdMode = 'as-is'): string {
  const trimmed = id.trim();
  if (mode === 'hex-to-dec' && HEX_DIGITS.test(trimmed)) {
    return canonical(BigInt(`0x${trimmed}`).toString(10));
  }
  if (mode === 'dec-to-hex' && DEC_DIGITS.test(trimmed)) {
    return canonical(BigInt(trimmed).toString(16));
  }
  return canonical(trimmed);
}

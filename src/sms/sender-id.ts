/**
 * Sender id rules (SPEC "Create Campaign Request", field `from`) and its SMPP addressing
 * (SMPP 3.4 §5.2.5 addr_ton, §5.2.6 addr_npi).
 *
 * - Leading and trailing whitespace is removed; at least one character must remain.
 * - Digits only: at most 20 digits, and not a number 50000..59999 (reserved). The value is
 *   compared as a number, so leading zeros do not escape the range: '050000' is reserved too.
 * - Anything else: at most 11 characters (Unicode code points), any characters.
 * - Kind: digits-only up to 8 digits is a short code (TON 3 network specific, NPI 0); 9..20
 *   digits is an international number (TON 1, NPI 1 E.164); anything else is alphanumeric
 *   (TON 5, NPI 0).
 */
export type SenderKind = 'alphanumeric' | 'shortcode' | 'international';

export type SenderResult =
  | { ok: true; value: string; kind: SenderKind; ton: number; npi: number }
  | { ok: false; reason: string };

export const SENDER_LIMITS = {
  maxDigits: 20,
  maxAlphanumericCharacters: 11,
  /** Longest digits-only sender treated as a short code rather than an international number. */
  maxShortCodeDigits: 8,
  reservedFrom: 50000,
  reservedTo: 59999,
} as const;

/** SMPP 3.4 §5.2.5 / §5.2.6 values for each kind. */
export const SENDER_ADDRESSING: Readonly<Record<SenderKind, { ton: number; npi: number }>> = {
  alphanumeric: { ton: 5, npi: 0 },
  international: { ton: 1, npi: 1 },
  shortcode: { ton: 3, npi: 0 },
};

const DIGITS_ONLY = /^[0-9]+$/;

function isReservedNumber(digits: string): boolean {
  const significant = digits.replace(/^0+/, '');
  // Compared on the digit string so a 20-digit value never loses precision as a Number.
  if (significant.length !== 5) return false;
  const value = Number(significant);
  return value >= SENDER_LIMITS.reservedFrom && value <= SENDER_LIMITS.reservedTo;
}

function accept(value: string, kind: SenderKind): SenderResult {
  return { ok: true, value, kind, ...SENDER_ADDRESSING[kind] };
}

export function validateSender(raw: string): SenderResult {
  const value = raw.trim();
  if (value.length === 0) return { ok: false, reason: 'sender id must contain a non-whitespace character' };
  if (DIGITS_ONLY.test(value)) {
    if (value.length > SENDER_LIMITS.maxDigits) return { ok: false, reason: `a numeric sender id has at most ${SENDER_LIMITS.maxDigits} digits` };
    if (isReservedNumber(value)) {
      return { ok: false, reason: `numbers ${SENDER_LIMITS.reservedFrom} through ${SENDER_LIMITS.reservedTo} are reserved` };
    }
    return accept(value, value.length <= SENDER_LIMITS.maxShortCodeDigits ? 'shortcode' : 'international');
  }
  let characters = 0;
  for (const _codePoint of value) characters++;
  if (characters > SENDER_LIMITS.maxAlphanumericCharacters) {
    return { ok: false, reason: `a sender id that is not digits-only has at most ${SENDER_LIMITS.maxAlphanumericCharacters} characters` };
  }
  return accept(value, 'alphanumeric');
}

/**
 * What an SMPP account's system_id and password may be. SMPP 3.4 §4.1.1 (bind_transmitter, and
 * the same fields of bind_receiver §4.1.3 and bind_transceiver §4.1.5): system_id is a C-Octet
 * String of at most 16 octets and password one of at most 9, each counting its terminating NUL,
 * so at most 15 and 8 characters. A longer password is refused when it is set, never cut: a
 * customer's ESME could not send it in a bind, and a silently shortened one would be a different
 * secret from the one the operator handed out.
 *
 * Printable ASCII only: a C-Octet String has no declared character set (§3.1), so anything else
 * would depend on how each ESME encodes it.
 */

/** SMPP 3.4 §4.1.1: system_id, 16 octets with the NUL. */
export const MAX_SYSTEM_ID_CHARS = 15;
/** SMPP 3.4 §4.1.1: password, 9 octets with the NUL. */
export const MAX_PASSWORD_CHARS = 8;

/** Printable ASCII without the space (0x21-0x7E): a system_id is an identifier the list prints. */
const SYSTEM_ID_SHAPE = /^[\x21-\x7e]+$/;
/** Printable ASCII with the space (0x20-0x7E). */
const PASSWORD_SHAPE = /^[\x20-\x7e]+$/;

/** Why `systemId` cannot be an account's system_id, or null when it can. */
export function systemIdProblem(systemId: string): string | null {
  if (systemId.length === 0) return 'must not be empty';
  if (!SYSTEM_ID_SHAPE.test(systemId)) return 'must be printable ASCII without spaces';
  if (systemId.length > MAX_SYSTEM_ID_CHARS) {
    return `is ${systemId.length} characters: SMPP 3.4 allows at most ${MAX_SYSTEM_ID_CHARS} (16 octets with the NUL)`;
  }
  return null;
}

/** Why `password` cannot be an account's password, or null when it can. */
export function passwordProblem(password: string): string | null {
  if (password.length === 0) return 'must not be empty';
  if (!PASSWORD_SHAPE.test(password)) return 'must be printable ASCII';
  if (password.length > MAX_PASSWORD_CHARS) {
    return `is ${password.length} characters: SMPP 3.4 allows at most ${MAX_PASSWORD_CHARS} (9 octets with the NUL); it is refused, not shortened`;
  }
  return null;
}

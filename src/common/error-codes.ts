/**
 * Every error code of smsgate, in one table. `GatewayError.code` is typed by
 * `ErrorCode`, so a misspelt or unknown code is a compile error wherever it is thrown or compared.
 * A code maps to an HTTP status in one place (api/http-errors.ts `httpProblemFor`) and to a CLI
 * exit code in one place (cli/coded-exit.ts `exitCodeFor`).
 *
 * Transport status strings that are data rather than our codes (SMPP ESME_* names, CMS_ERROR_n,
 * the receipt Status values) are not listed here and stay plain strings.
 */

/** Builds `{ CODE: 'CODE' }` from the list, so a key can never differ from its value. */
function codeTable<const T extends readonly string[]>(codes: T): { readonly [K in T[number]]: K } {
  return Object.freeze(Object.fromEntries(codes.map((code) => [code, code]))) as { readonly [K in T[number]]: K };
}

export const ERROR_CODE = codeTable([
  // config/
  'CONFIG_INVALID',
  // api/ (HTTP request handling)
  'REQUEST_BODY_INVALID',
  'REQUEST_BODY_TOO_LARGE',
  'REQUEST_BODY_BUDGET_EXHAUSTED',
  'REQUEST_CLIENT_BUDGET_EXHAUSTED',
  'REQUEST_BODY_TOO_SLOW',
  'NOT_CLIENT_ADMINISTRATOR',
  // admin/
  'ADMIN_LISTEN_FAILED',
  // smpp-server/
  /** The SMPP server cannot listen on smppServer.host:smppServer.port (in use, no such address, a privileged port). */
  'SMPP_SERVER_LISTEN_FAILED',
  /** `smsgate config reload` found no running serve to ask: its admin listener did not answer and no pid holds the database. */
  'SERVE_NOT_REACHED',
  // campaigns/
  'CAMPAIGN_INVALID',
  'CAMPAIGN_ID_INVALID',
  'CAMPAIGN_NOT_FOUND',
  'CAMPAIGN_NOT_STORED',
  /** The client's available credits do not cover the campaign's most it can cost: nothing stored. */
  'CREDITS_INSUFFICIENT',
  /** An Idempotency-Key header that is not 1 to 255 printable ASCII characters. */
  'IDEMPOTENCY_KEY_INVALID',
  /** The key was used by this client with a different request body (within its 24 hours). */
  'IDEMPOTENCY_KEY_REUSED',
  /** A request under the key is still being processed (or another took the key over). */
  'IDEMPOTENCY_KEY_IN_FLIGHT',
  // auth/ and the admin CLI
  'INVALID_ARGUMENT',
  'CLIENT_EXISTS',
  'CLIENT_NOT_FOUND',
  'USER_EXISTS',
  'USER_NOT_FOUND',
  'TOKEN_NOT_FOUND',
  'SENDER_EXISTS',
  'SENDER_NOT_FOUND',
  /** `smpp-account add` with a system_id another SMPP account has. */
  'SMPP_ACCOUNT_EXISTS',
  /** No SMPP account has that system_id. */
  'SMPP_ACCOUNT_NOT_FOUND',
  'SIGNING_KEY_MISSING',
  'MESSAGE_NOT_FOUND',
  // inbound/
  'INBOUND_ROUTE_EXISTS',
  'INBOUND_ROUTE_NOT_FOUND',
  'OPTOUT_NOT_FOUND',
  /** A part of a concatenated MO refused: its originator or the gateway holds as many incomplete parts as allowed. */
  'INBOUND_PARTS_LIMIT',
  // store/
  'DATABASE_NOT_FOUND',
  'DATABASE_IN_USE',
  /** The SQLite file at database.path was deleted or replaced while open: writes refused (503) until a restart. */
  'DATABASE_FILE_MOVED',
  'DATABASE_UNREACHABLE',
  /** The configured database backend cannot do what was asked (e.g. a file backup of PostgreSQL). */
  'BACKEND_UNSUPPORTED',
  'STORE_CLOSED',
  /** The database cannot serve now (unreachable, shutting down, disk full, busy): retry later. */
  'STORE_UNAVAILABLE',
  'SECRET_KEY_INVALID',
  'SECRET_UNREADABLE',
  'BACKUP_EXISTS',
  // webhooks/
  'WEBHOOK_FIELD_INVALID',
  // sms/ (GSM-7, UCS-2, concatenation)
  'SMS_BAD_UCS2',
  'SMS_PART_TOO_LONG',
  'SMS_TOO_MANY_PARTS',
  'SMS_NO_LOCKING_TABLE',
  'SMS_NOT_GSM7',
  'SMS_BAD_SEPTET',
  'SMS_BAD_CONCAT',
  'SMS_BAD_FILL_BITS',
  'SMS_SHORT_USER_DATA',
  // pdu/ (3GPP TS 23.040 PDUs)
  'PDU_WRONG_TYPE',
  'PDU_TRAILING_OCTETS',
  'PDU_LENGTH_MISMATCH',
  'PDU_BAD_TIMESTAMP',
  'PDU_BAD_DCS',
  'PDU_BAD_ADDRESS',
  'PDU_BAD_VALIDITY',
  'PDU_USER_DATA_TOO_LONG',
  'PDU_UNKNOWN_NATIONAL_LANGUAGE',
  'PDU_BAD_USER_DATA',
  'PDU_BAD_HEX',
  'PDU_TRUNCATED',
  // transports/smpp/
  'SMPP_BIND_TIMEOUT',
  'SMPP_BIND_REFUSED',
  'SMPP_CONNECT_FAILED',
  'RESPONSE_TIMEOUT',
  'CONNECTION_LOST',
  'TRANSPORT_STOPPED',
  // transports/modem/
  'AT_CLOSED',
  'AT_CLOSED_AFTER_PDU',
  'AT_PROMPT_TIMEOUT',
  'AT_TIMEOUT',
  'AT_RESULT_TIMEOUT',
  'MODEM_COMMAND_FAILED',
  'MODEM_NOT_RESPONDING',
  'MODEM_SIM_ERROR',
  'MODEM_SIM_PIN_REQUIRED',
  'MODEM_SIM_PIN_REJECTED',
  'MODEM_SIM_LOCKED',
  'MODEM_NOT_REGISTERED',
  'MODEM_BAD_URC',
  'MODEM_READ_FAILED',
  'MODEM_CONFIG_INVALID',
  'MODEM_PROFILE_DIR',
  'MODEM_PROFILE_INVALID',
  'MODEM_PROFILE_UNKNOWN',
  'MODEM_OPEN_FAILED',
] as const);

export type ErrorCode = keyof typeof ERROR_CODE;

/** Every code, in table order: for the mapping tests and anything that must cover them all. */
export const ERROR_CODES: readonly ErrorCode[] = Object.keys(ERROR_CODE) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODE, value);
}

/**
 * The one error type of smsgate. Branch on `code`, never on `message`.
 * Codes are listed once in error-codes.ts; `code` is typed by that table, so an unknown code does
 * not compile.
 */
import type { ErrorCode } from './error-codes.js';

export { ERROR_CODE, ERROR_CODES, isErrorCode, type ErrorCode } from './error-codes.js';

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: { retryable?: boolean; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details ?? {};
  }
}

export function isGatewayError(err: unknown, code?: ErrorCode): err is GatewayError {
  return err instanceof GatewayError && (code === undefined || err.code === code);
}

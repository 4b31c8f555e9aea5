/**
 * The one error type of smsgate. Branch on `code`, never on `message`.
 * Codes are SCREAMING_SNAKE strings owned by the module that throws them.
 */
export class GatewayError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: string, message: string, options: { retryable?: boolean; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details ?? {};
  }
}

export function isGatewayError(err: unknown, code?: string): err is GatewayError {
  return err instanceof GatewayError && (code === undefined || err.code === code);
}

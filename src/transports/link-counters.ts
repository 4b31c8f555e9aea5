/**
 * The running counts behind a transport's linkCounters() (transport.ts LinkCounters): one per
 * transport, shared by its links and kept when a link goes away, so every count only grows.
 */
import { isGatewayError } from '../common/errors.js';
import { isErrorCode } from '../common/error-codes.js';
import type { LinkCounters } from './transport.js';

export class LinkCounterTally implements LinkCounters {
  bindAttempts = 0;
  sessionsLost = 0;
  private readonly failures = new Map<string, number>();

  get bindFailures(): ReadonlyMap<string, number> {
    return this.failures;
  }

  attempted(): void {
    this.bindAttempts++;
  }

  /** A bind attempt failed with `err`: counted under its error code, or OTHER. */
  failed(err: unknown): void {
    const reason = bindFailureReason(err);
    this.failures.set(reason, (this.failures.get(reason) ?? 0) + 1);
  }

  lost(): void {
    this.sessionsLost++;
  }
}

/** The metric's reason label: the GatewayError code (a bounded set, error-codes.ts), else OTHER. */
export function bindFailureReason(err: unknown): string {
  return isGatewayError(err) && isErrorCode(err.code) ? err.code : 'OTHER';
}

/**
 * How an expiry sweep of unmatched receipts is logged, by the SQLite and the PostgreSQL engine
 * alike: one warn line per sweep counting them by transport, with a few examples, not a line per
 * receipt (a carrier sending receipts for another account's messages would otherwise write one
 * line per receipt; docs/behaviour/metrics-and-logs.md). Each is kept in table receipts.
 */
import type { Logger } from '../common/log.js';
import type { ExpiredReceipt } from '../store/sqlite/dispatch-store.js';

/** Receipts named in the line (id, transport, message id, status); the rest are only counted. */
export const EXPIRED_RECEIPT_EXAMPLES = 5;

export function logExpiredReceipts(logger: Logger, expired: readonly ExpiredReceipt[]): void {
  if (expired.length === 0) return;
  const byTransport: Record<string, number> = {};
  for (const r of expired) byTransport[r.transport] = (byTransport[r.transport] ?? 0) + 1;
  const examples = expired.slice(0, EXPIRED_RECEIPT_EXAMPLES).map((r) => ({
    receiptId: r.id, transport: r.transport, messageId: r.message_id, status: r.status, receivedAt: new Date(r.received_at).toISOString(),
  }));
  logger.warn({ expired: expired.length, byTransport, examples },
    'receipts matched no submitted part within the TTL: expired (kept in table receipts)');
}

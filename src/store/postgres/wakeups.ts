/**
 * LISTEN/NOTIFY wake-ups between nodes ("LISTEN/NOTIFY wakes nodes, polling is
 * the fallback"). A node that makes work due (queues parts, an outbox event, a campaign) notifies a
 * channel; every node listening on it wakes its loop at once instead of at its next poll. A
 * notification sent inside a transaction is delivered when it commits, and only then, so a woken
 * node always finds the work.
 *
 * Listening needs one session of its own (LISTEN belongs to a connection; a pooled one would be
 * handed to other work): PgWakeups keeps a dedicated client, and when that connection drops it
 * reconnects after reconnectDelayMs, reporting the gap through onListening(false) so the caller
 * leans on polling meanwhile. Nothing is lost by a gap but latency: polling finds the work.
 */
import pg from 'pg';
import { CONNECT_TIMEOUT_MS, PG_TYPES } from './pool.js';
import type { PgQueryable } from './pool.js';

/** The channels of smsgate's wake-ups: one per kind of work a loop waits for. */
export const WAKE_CHANNELS = ['smsgate_parts', 'smsgate_outbox', 'smsgate_campaigns'] as const;
export type WakeChannel = (typeof WAKE_CHANNELS)[number];

/** Wakes the listeners of `channel` (at the commit, when `db` is a client inside a transaction). */
export async function notifyWake(db: PgQueryable, channel: WakeChannel, payload = ''): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [channel, payload]);
}

export interface WakeupOptions {
  url: string;
  channels: readonly WakeChannel[];
  onWake(channel: WakeChannel, payload: string): void;
  /** false when the listening connection dropped (poll meanwhile), true once listening (again). */
  onListening?(listening: boolean): void;
  /** Wait before reconnecting a dropped listener; default 1,000 ms. */
  reconnectDelayMs?: number;
}

export class PgWakeups {
  private client: pg.Client | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  private constructor(private readonly options: WakeupOptions) {}

  /** Connects and listens; rejects when the first connection fails (the caller decides whether to poll only). */
  static async start(options: WakeupOptions): Promise<PgWakeups> {
    const wakeups = new PgWakeups(options);
    await wakeups.connect();
    return wakeups;
  }

  /** Stops listening and closes the connection. Safe to call twice. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.url, types: PG_TYPES, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true });
    const known = new Set<string>(this.options.channels);
    client.on('notification', (message) => {
      if (known.has(message.channel)) this.options.onWake(message.channel as WakeChannel, message.payload ?? '');
    });
    // A dropped session ends in 'error' (the server went) or 'end' (the socket closed): either way once.
    let lost = false;
    const onLost = (): void => {
      if (lost || this.closed) return;
      lost = true;
      this.client = undefined;
      this.options.onListening?.(false);
      this.scheduleReconnect();
    };
    client.on('error', onLost);
    client.on('end', onLost);
    try {
      await client.connect();
      // Channel names are identifiers, not parameters: quoted, and only the known ones.
      for (const channel of this.options.channels) await client.query(`LISTEN "${channel}"`);
    } catch (err) {
      lost = true;
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.options.onListening?.(true);
  }

  private scheduleReconnect(): void {
    this.retry = setTimeout(() => {
      if (this.closed) return;
      this.connect().catch(() => this.scheduleReconnect());
    }, this.options.reconnectDelayMs ?? 1_000);
    this.retry.unref();
  }
}

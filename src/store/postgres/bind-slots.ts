/**
 * Which of an SMPP transport's bind slots this node may open, in a cluster on PostgreSQL.
 * `binds: N` is the carrier's limit for the whole cluster: slot k of transport T belongs to
 * the node whose database session holds the advisory lock (transportLockKey(T), k). Locks are
 * session-level and live on one dedicated connection, so they vanish the moment that connection
 * does: a node that is killed, or cut off from the database, gives its slots up without anyone
 * cleaning up. The other side of that bargain is `onLost`: a node that lost the connection must
 * unbind at once, because another node may already hold its slots.
 */
import pg from 'pg';
import { CONNECT_TIMEOUT_MS } from './pool.js';

/** A stable signed 32-bit key for a transport name (FNV-1a), the first half of each slot's lock. */
export function transportLockKey(transport: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(transport, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

/** The most slots one node may hold: the carrier's binds shared fairly over the live nodes. */
export function fairShareOfBinds(binds: number, liveNodes: number): number {
  return Math.ceil(binds / Math.max(1, liveNodes));
}

/**
 * The cluster's `maxPerSecond` split evenly over the slots: a node sends at this rate per slot it
 * holds, so the cluster as a whole stays within the cap whichever node holds which slot.
 */
export function slotRatePerSecond(maxPerSecond: number, binds: number): number {
  return maxPerSecond / Math.max(1, binds);
}

export interface BindSlotLocksOptions {
  /** Called once when the lock connection is lost: every slot is gone; unbind them all at once. */
  onLost: (err: Error) => void;
  /** Live nodes of the cluster now (NodeRegistry.liveNodes), for the fair share; 1 if not given. */
  liveNodes?: () => Promise<number>;
}

export class BindSlotLocks {
  private readonly held = new Map<string, Set<number>>();
  private lost = false;

  private readonly liveNodes: () => Promise<number>;
  private readonly lose: (err: Error) => void;

  private constructor(
    private readonly client: pg.Client,
    options: BindSlotLocksOptions,
  ) {
    this.liveNodes = options.liveNodes ?? (() => Promise.resolve(1));
    this.lose = (err: Error): void => {
      if (this.lost) return;
      this.lost = true;
      this.held.clear();
      options.onLost(err);
    };
    client.on('error', this.lose);
    client.on('end', () => this.lose(new Error('the bind slot lock connection ended')));
  }

  /**
   * Asks the session to answer within timeoutMs. A session that does not (a network path gone
   * silent: no reset, so no 'error' for as long as TCP keeps trying) is given up as lost, onLost
   * included: the server may end it and release the slots at any moment, so this node must not
   * keep binding them. False when the session is lost.
   */
  async ping(timeoutMs: number): Promise<boolean> {
    if (this.lost) return false;
    let timer: NodeJS.Timeout | undefined;
    try {
      const answered = this.client.query('SELECT 1').then(() => 'answered' as const);
      // The deadline is decided after the loop's next poll phase (setImmediate), not in the timer
      // itself: a process resumed after a freeze (SIGSTOP, a long GC pause) runs its overdue timers
      // before it reads its sockets, so an answer already waiting would otherwise count as none,
      // and a live session (and the slots its locks hold) would be given up for nothing.
      const deadline = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => setImmediate(() => resolve('timeout')), timeoutMs);
      });
      if ((await Promise.race([answered, deadline])) === 'timeout') {
        throw new Error(`the bind slot session did not answer within ${timeoutMs} ms`);
      }
      return true;
    } catch (err) {
      this.lose(err instanceof Error ? err : new Error(String(err)));
      // Not awaited: over a silent path the goodbye may never be acknowledged.
      void this.client.end().catch(() => undefined);
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Opens the dedicated connection the locks live on. */
  static async connect(connectionString: string, options: BindSlotLocksOptions): Promise<BindSlotLocks> {
    // Bounded connect (a server that is gone fails the attempt, the keeper retries with backoff) and
    // TCP keepalive (a peer that vanished without a FIN is noticed, and the binds dropped).
    const client = new pg.Client({ connectionString, application_name: 'smsgate bind slots', connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true });
    await client.connect();
    return new BindSlotLocks(client, options);
  }

  /** True once the connection is gone: no slot is held any more. */
  get isLost(): boolean {
    return this.lost;
  }

  /** The most slots of `binds` this node should hold now (the SMPP transport's BindSlotGate). */
  async fairShare(binds: number): Promise<number> {
    return fairShareOfBinds(binds, await this.liveNodes());
  }

  /** The slots of transport held now, ascending. */
  owned(transport: string): number[] {
    return [...(this.held.get(transport) ?? [])].sort((a, b) => a - b);
  }

  /**
   * Tries the free slots of transport, lowest first, until this node holds maxOwned of its `binds`
   * (or none is left); returns every slot held afterwards. Never blocks on a slot another node holds.
   */
  async claim(transport: string, binds: number, maxOwned: number): Promise<number[]> {
    const held = this.held.get(transport) ?? new Set<number>();
    this.held.set(transport, held);
    const key = transportLockKey(transport);
    for (let slot = 0; slot < binds && held.size < maxOwned && !this.lost; slot++) {
      if (held.has(slot)) continue;
      const result = await this.client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::int, $2::int) AS locked', [key, slot]);
      if (result.rows[0]?.locked === true) held.add(slot);
    }
    return this.owned(transport);
  }

  /** Gives one slot back (after its bind was closed), so a node with fewer slots can take it. */
  async release(transport: string, slot: number): Promise<void> {
    const held = this.held.get(transport);
    if (held === undefined || !held.has(slot)) return;
    held.delete(slot);
    if (this.lost) return;
    await this.client.query('SELECT pg_advisory_unlock($1::int, $2::int)', [transportLockKey(transport), slot]);
  }

  /** Closes the connection: PostgreSQL releases every slot. Not reported through onLost. */
  async close(): Promise<void> {
    if (this.lost) return;
    this.lost = true;
    this.held.clear();
    await this.client.end();
  }
}

/**
 * Keeps this node's share of every SMPP transport's bind slots (`binds` is the
 * carrier's limit for the whole cluster). The slots live on one dedicated database session
 * (BindSlotLocks, src/store/postgres/bind-slots.ts); this keeper is the BindSlotGate every SMPP
 * transport built from config is given, and it outlives that session:
 * - the session is lost (the database went, a failover, a network cut): PostgreSQL has released
 *   every slot, so another node may bind them now; every SMPP transport drops its binds at once,
 *   then the keeper reconnects with a growing backoff and the transports claim slots again;
 * - each sync() brings every transport to its fair share (ceil(binds / live nodes)): a node over
 *   it (a node joined) drains and gives back its highest slots, a node under it (a node left or
 *   died, or a slot came free) claims the free ones.
 * Without a session the gate grants nothing, so no bind opens while the node cannot prove it holds
 * the slot.
 */
import { FailureLog } from '../common/failure-log.js';
import type { Logger } from '../common/log.js';
import { fairShareOfBinds } from '../store/postgres/bind-slots.js';
import type { BindSlotGate } from '../transports/smpp/smpp-transport.js';
import type { Transport } from '../transports/transport.js';

/** An SMPP transport that opens only the slots a gate grants (SmppTransport with a slotGate). */
export interface SlottedTransport {
  readonly name: string;
  /** The slots this node runs binds on now. */
  heldSlots(): number[];
  /** Brings the binds to this node's fair share of the slots; the slots held afterwards. */
  syncSlots(): Promise<number[]>;
  /** Closes every bind now: the slots are gone. */
  dropSlots(): Promise<void>;
}

export function isSlottedTransport(transport: Transport): transport is Transport & SlottedTransport {
  const candidate = transport as Partial<SlottedTransport>;
  return transport.type === 'smpp' && typeof candidate.syncSlots === 'function' && typeof candidate.dropSlots === 'function'
    && typeof candidate.heldSlots === 'function';
}

/** The lock session as the keeper uses it (BindSlotLocks). */
export interface SlotSession extends BindSlotGate {
  readonly isLost: boolean;
  /** Whether the session answers within timeoutMs; one that does not is given up (reported lost). */
  ping(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface BindSlotKeeperOptions {
  /** Opens a new lock session; `onLost` is called once if that session later drops. */
  connect(onLost: (err: Error) => void): Promise<SlotSession>;
  logger: Logger;
  now?: () => number;
  /** First wait before reconnecting a lost session; doubles per failure up to maxReconnectDelayMs. */
  reconnectDelayMs?: number;
  maxReconnectDelayMs?: number;
  /** See SLOT_PING_TIMEOUT_MS. */
  pingTimeoutMs?: number;
  /**
   * Whether this node runs a transport with the cluster's settings (ConfigAgreement): one that does
   * not gets no slot, and the slots are shared among the nodes that do.
   */
  agreement?: SlotAgreement;
}

/** What the keeper asks of the config agreement (src/cluster/config-agreement.ts). */
export interface SlotAgreement {
  mayBind(transport: string): boolean;
  agreeingNodes(transport: string): number | undefined;
}

export const SLOT_RECONNECT_DELAY_MS = 1_000;
/**
 * How long the slot session may take to answer the ping of each sync. A path to PostgreSQL gone
 * silent raises no error until TCP gives up (minutes); the server, meanwhile, may have ended the
 * session and released the slots, so a node that cannot hear its session unbinds within this.
 */
export const SLOT_PING_TIMEOUT_MS = 2_000;
export const SLOT_MAX_RECONNECT_DELAY_MS = 30_000;

export class BindSlotKeeper implements BindSlotGate {
  private session: SlotSession | undefined;
  private transports: readonly SlottedTransport[] = [];
  private closed = false;
  private readonly now: () => number;
  private readonly logger: Logger;
  private readonly failures: FailureLog;
  private readonly firstDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly pingTimeoutMs: number;
  private delayMs: number;
  private nextConnectAtMs = 0;

  constructor(private readonly options: BindSlotKeeperOptions) {
    this.now = options.now ?? Date.now;
    this.logger = options.logger;
    this.firstDelayMs = options.reconnectDelayMs ?? SLOT_RECONNECT_DELAY_MS;
    this.maxDelayMs = options.maxReconnectDelayMs ?? SLOT_MAX_RECONNECT_DELAY_MS;
    this.pingTimeoutMs = options.pingTimeoutMs ?? SLOT_PING_TIMEOUT_MS;
    this.delayMs = this.firstDelayMs;
    this.failures = new FailureLog(options.logger, 'connecting the bind slot session', undefined, this.now);
  }

  /** True while a lock session is open: the slots the transports hold are really theirs. */
  get connected(): boolean {
    return this.session !== undefined && !this.session.isLost;
  }

  /** The transports whose slots this keeper syncs (the SMPP transports built with it as their gate). */
  attach(transports: readonly SlottedTransport[]): void {
    this.transports = transports;
  }

  /** Opens the lock session if there is none (and the backoff allows); false when there is still none. */
  async ensureSession(): Promise<boolean> {
    if (this.connected) return true;
    if (this.closed || this.now() < this.nextConnectAtMs) return false;
    try {
      const session = await this.options.connect((err) => this.onLost(session, err));
      if (this.closed) {
        await session.close();
        return false;
      }
      this.session = session;
      this.delayMs = this.firstDelayMs;
      this.failures.recovered();
      return true;
    } catch (err) {
      this.failures.failed(err, { retryInMs: this.delayMs });
      this.nextConnectAtMs = this.now() + this.delayMs;
      this.delayMs = Math.min(this.delayMs * 2, this.maxDelayMs);
      return false;
    }
  }

  /**
   * (Re)connects when needed, then brings every transport to its fair share. A session lost while
   * a transport was syncing may have let that transport start a bind on a slot it no longer
   * holds: it is dropped again here, so the carrier never keeps more binds than `binds`.
   */
  async sync(): Promise<void> {
    if (!(await this.ensureSession())) return;
    const used = this.session;
    // A silent session is reported lost by the ping (onLost drops every bind).
    if (used === undefined || !(await used.ping(this.pingTimeoutMs))) return;
    for (const transport of this.transports) {
      if (used?.isLost !== false) break;
      await transport.syncSlots();
    }
    if (used?.isLost === true) await this.dropAll();
  }

  async fairShare(binds: number, transport?: string): Promise<number> {
    // No session: no slot is this node's, so a sync drains whatever it still runs.
    if (!this.connected) return 0;
    const agreement = this.options.agreement;
    if (transport !== undefined && agreement !== undefined) {
      // Settings other than the cluster's: none (its binds would exceed the carrier's limit, its
      // rate the cap). The nodes that agree share the slots among themselves.
      if (!agreement.mayBind(transport)) return 0;
      const agreeing = agreement.agreeingNodes(transport);
      if (agreeing !== undefined && agreeing > 0) return fairShareOfBinds(binds, agreeing);
    }
    return (this.session as SlotSession).fairShare(binds);
  }

  async claim(transport: string, binds: number, maxOwned: number): Promise<number[]> {
    return this.connected ? (this.session as SlotSession).claim(transport, binds, maxOwned) : [];
  }

  async release(transport: string, slot: number): Promise<void> {
    // A lost session released every slot with it.
    if (this.connected) await (this.session as SlotSession).release(transport, slot);
  }

  /** Closes the session: PostgreSQL releases every slot. Call after the transports stopped. */
  async close(): Promise<void> {
    this.closed = true;
    const session = this.session;
    this.session = undefined;
    await session?.close();
  }

  private onLost(session: SlotSession, err: Error): void {
    if (this.closed || session !== this.session) return;
    this.logger.warn({ err }, 'bind slot session lost: another node may hold these slots now, so every SMPP bind is closed at once; reconnecting');
    this.nextConnectAtMs = this.now() + this.delayMs;
    void this.dropAll();
  }

  private async dropAll(): Promise<void> {
    await Promise.all(this.transports.map((transport) =>
      transport.dropSlots().catch((err: unknown) => this.logger.error({ err, transport: transport.name }, 'dropping binds failed'))));
  }
}

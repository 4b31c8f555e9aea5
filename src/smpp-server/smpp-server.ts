/**
 * The SMPP server for customers as one running thing: its parts come built (the protocol
 * listener, the bind gate, the delivery sender, the status reads) and this class only starts
 * them, keeps this node's bound sessions counted in the cluster (a heartbeat), stops them, and
 * answers the status page, /status.json and /metrics (SmppServerStatusSource).
 *
 * Start order: the bind gate first (it clears what a crash of this node left, so its binds never
 * count twice), then the delivery sender (waiting receipts go out as soon as a receiver binds), then
 * the listener (customers may bind from then on). Stop order is the reverse: the listener first,
 * unbinding every customer so none submits into a gateway that is stopping, then the sender, then
 * the heartbeat. The gateway stops this before its engine drains (src/gateway/running-gateway.ts).
 */
import type { Logger } from '../common/log.js';
import { GatewayError } from '../common/errors.js';
import type {
  DeliveringSession,
  LocalSessions,
  ServerSessionInfo,
  ServerSessionView,
  SmppServerConfig,
  SmppServerStatusSource,
  SubmitCount,
} from './contracts.js';

/** The protocol listener, listening: startSmppListener gives one. */
export interface SmppListenerLike extends LocalSessions {
  /** This node's bound sessions, with their window use and submit rate. */
  views(): ServerSessionView[];
  /** submit_sm answered on this listener since it started, by account and status name. */
  submitCounts(): readonly SubmitCount[];
  /** Where it listens (port 0 picks one); undefined once closed. */
  address?(): { host: string; port: number } | undefined;
  /**
   * Stops taking connections, unbinds every bound customer (unbind, waiting for unbind_resp up
   * to the response deadline), then closes what is left. Resolves when no session is open.
   */
  close(): Promise<void>;
}

/** The bind gate as the lifecycle uses it (accounts, bind limits across the cluster). */
export interface SmppBindGateLike {
  /** Before any bind is taken: e.g. removes session rows this node left when it last stopped or crashed. */
  start(): Promise<void>;
  /**
   * Refreshes the heartbeat of these sessions of this node (never called with none), so their rows
   * keep counting towards their accounts' bind limits; a row not refreshed for the session
   * timeout belongs to a node that died and no longer counts.
   */
  heartbeat(sessionIds: readonly string[]): Promise<void>;
}

/** The delivery sender (store and forward of deliver_sm) as the lifecycle uses it. */
export interface SmppDeliverySenderLike {
  start(): void;
  /** Looks for due rows now (a commit on this node stored some). */
  wake(): void;
  /** Stops sending; resolves when no deliver_sm it sent is still awaiting its response. */
  stop(): Promise<void>;
}

/** What the status reads from the store, for every node of the cluster. */
export interface SmppServerStatusStore {
  /**
   * Every session that still counts, on any node (its heartbeat within the session timeout),
   * windowInUse and submitsPerSecond null: only the node holding a session knows them.
   */
  clusterSessions(): Promise<ServerSessionView[]>;
  /** smpp_deliveries waiting, by account system_id, every account listed (0 included). */
  deliveriesWaiting(): Promise<ReadonlyMap<string, number>>;
}

/**
 * This node's sessions as the delivery sender sees them, built before the listener exists: the
 * sender starts first, so it is handed this relay, which answers "none" until the listener is
 * attached and again after it closed. Receiver-bound listeners registered early are kept and
 * told once the listener runs.
 */
export class LocalSessionsRelay implements LocalSessions {
  private current: LocalSessions | undefined;
  private readonly boundListeners: ((session: ServerSessionInfo) => void)[] = [];

  receiversOf(accountId: number): readonly DeliveringSession[] {
    return this.current?.receiversOf(accountId) ?? [];
  }

  accountsWithReceivers(): readonly number[] {
    return this.current?.accountsWithReceivers() ?? [];
  }

  onReceiverBound(listener: (session: ServerSessionInfo) => void): void {
    this.boundListeners.push(listener);
  }

  /** The listener is up: its sessions are the relay's, and its binds reach every registered listener. */
  attach(sessions: LocalSessions): void {
    this.current = sessions;
    sessions.onReceiverBound((session) => {
      // A listener closed and replaced (a restart of the server) must not report through the relay.
      if (this.current !== sessions) return;
      for (const listener of this.boundListeners) listener(session);
    });
  }

  detach(): void {
    this.current = undefined;
  }
}

export interface SmppServerParts {
  /** The smppServer section, for where it listens (error messages name these keys). */
  config: Pick<SmppServerConfig, 'host' | 'port'>;
  /** Opens the listener; resolves once it listens. */
  listen(): Promise<SmppListenerLike>;
  bindGate: SmppBindGateLike;
  sender: SmppDeliverySenderLike;
  /** The relay the sender was built with (attached to the listener while it runs); optional when the sender needs none. */
  sessions?: LocalSessionsRelay;
  statusStore: SmppServerStatusStore;
  /** How old a session row's heartbeat may be before it stops counting; the heartbeat runs every third of it. */
  sessionStaleMs: number;
  logger: Logger;
}

type State = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

export class SmppServer implements SmppServerStatusSource {
  private state: State = 'new';
  private listener: SmppListenerLike | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private heartbeatInFlight: Promise<void> | undefined;
  /** The listener's counts when it closed: /metrics counters must not fall back to zero at a stop. */
  private closedCounts: readonly SubmitCount[] = [];
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly parts: SmppServerParts) {}

  /** The gateway reads its status through this (src/gateway/smpp-server-hook.ts). */
  get status(): SmppServerStatusSource {
    return this;
  }

  /** How often this node refreshes its sessions' rows. */
  get heartbeatIntervalMs(): number {
    return Math.max(1, Math.floor(this.parts.sessionStaleMs / 3));
  }

  /** Starts the bind gate, the sender, then the listener; a failure undoes what started and rethrows. */
  start(): Promise<void> {
    if (this.state !== 'new') return Promise.reject(new Error(`SmppServer.start: already ${this.state}`));
    this.state = 'starting';
    this.starting = this.startOnce();
    return this.starting;
  }

  private async startOnce(): Promise<void> {
    const { bindGate, sender, logger } = this.parts;
    try {
      await bindGate.start();
    } catch (err) {
      this.state = 'stopped';
      throw err;
    }
    sender.start();
    let listener: SmppListenerLike;
    try {
      listener = await this.parts.listen();
    } catch (err) {
      await sender.stop();
      this.state = 'stopped';
      throw listenFailure(err, this.parts.config);
    }
    this.listener = listener;
    this.parts.sessions?.attach(listener);
    this.heartbeatTimer = setInterval(() => this.beat(), this.heartbeatIntervalMs);
    // The heartbeat never keeps a process alive on its own.
    this.heartbeatTimer.unref();
    this.state = 'running';
    const where = this.address();
    logger.info({ host: where?.host, port: where?.port }, `SMPP server listening on ${where?.host}:${where?.port}`);
  }

  /** Unbinds every customer, stops the sender and the heartbeat; once only (later calls wait for the first). */
  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  /** Where the listener listens while running. */
  /** A commit on this node stored a deliver_sm for a customer: the sender looks at once. */
  wakeDeliveries(): void {
    this.parts.sender.wake();
  }

  address(): { host: string; port: number } | undefined {
    return this.listener?.address?.();
  }

  async sessions(): Promise<ServerSessionView[]> {
    const local = this.listener?.views() ?? [];
    const mine = new Map(local.map((view) => [view.sessionId, view]));
    const rows = await this.parts.statusStore.clusterSessions();
    // This node's sessions as the listener knows them (window use, rate); a bind whose row the
    // read did not see yet is still listed.
    const merged = rows.map((row) => mine.get(row.sessionId) ?? row);
    const listed = new Set(merged.map((view) => view.sessionId));
    for (const view of local) if (!listed.has(view.sessionId)) merged.push(view);
    return merged.sort((a, b) => a.systemId.localeCompare(b.systemId) || a.boundAt - b.boundAt || a.sessionId.localeCompare(b.sessionId));
  }

  deliveriesWaiting(): Promise<ReadonlyMap<string, number>> {
    return this.parts.statusStore.deliveriesWaiting();
  }

  submitCounts(): readonly SubmitCount[] {
    return this.listener?.submitCounts() ?? this.closedCounts;
  }

  private async stopOnce(): Promise<void> {
    // A stop during the start waits for it, then undoes whatever it got to (a failed start undid itself).
    const started = await (this.starting ?? Promise.resolve()).then(
      () => this.state === 'running',
      () => false,
    );
    this.state = 'stopping';
    if (started) {
      const listener = this.listener as SmppListenerLike;
      await listener.close();
      this.closedCounts = listener.submitCounts();
      this.parts.sessions?.detach();
      this.listener = undefined;
      await this.parts.sender.stop();
      clearInterval(this.heartbeatTimer);
      this.heartbeatTimer = undefined;
      await this.heartbeatInFlight;
      this.parts.logger.info('SMPP server stopped');
    }
    this.state = 'stopped';
  }

  /** One heartbeat at a time: a slow store skips a tick rather than piling writes up. */
  private beat(): void {
    if (this.heartbeatInFlight !== undefined || this.listener === undefined) return;
    const ids = this.listener.views().map((view) => view.sessionId);
    if (ids.length === 0) return;
    this.heartbeatInFlight = this.parts.bindGate
      .heartbeat(ids)
      .catch((err: unknown) => {
        // The rows age meanwhile; once past the session timeout they stop counting towards bind
        // limits on other nodes until a beat gets through again.
        this.parts.logger.warn({ err, sessions: ids.length }, 'SMPP server heartbeat failed: this node\'s sessions are not refreshed');
      })
      .finally(() => {
        this.heartbeatInFlight = undefined;
      });
  }
}

/** A listen errno becomes a coded error naming the config keys (never mistaken for the API's port). */
function listenFailure(err: unknown, config: Pick<SmppServerConfig, 'host' | 'port'>): unknown {
  const errno = err as NodeJS.ErrnoException | undefined;
  if (errno?.syscall !== 'listen' && errno?.syscall !== 'getaddrinfo') return err;
  return new GatewayError(
    'SMPP_SERVER_LISTEN_FAILED',
    `SMPP server cannot listen on ${config.host}:${config.port} (smppServer.host, smppServer.port): ${errno.code ?? errno.message}`,
    { cause: err, details: { path: 'smppServer.port' } },
  );
}

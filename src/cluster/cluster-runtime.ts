/**
 * What makes a `smsgate serve` on PostgreSQL a node of the cluster, beside
 * the engine, the webhook sender and the campaign processor it serves:
 * - membership: joins with a fresh id (the NodeIdSource its claims are stamped with), heartbeats
 *   every NODE_HEARTBEAT_MS; a beat answered 'fenced' (the lease ran out while the node stalled or
 *   was cut off) means every claim made under the old id is void: warn, rejoin under a new id, and
 *   wake the loops so they claim afresh;
 * - takeover: each beat also reaps the nodes whose lease ran out (their in-flight parts, outbox
 *   leases and half-processed campaigns back to the queues, one transaction), and wakes the loops
 *   when it moved anything;
 * - bind slots: the SMPP transports' BindSlotGate (BindSlotKeeper), synced on its own loop so a
 *   slow drain of a bind never delays a heartbeat; woken at once when the live-node count changes;
 * - wake-ups: LISTEN on the wake channels (src/store/postgres/wakeups.ts), polling stays the fallback.
 * A database that is gone is logged once, then at most every 30 s (FailureLog), and tried again at
 * every beat; nothing here throws into the process.
 */
import { BackgroundWorker } from '../common/background-worker.js';
import { FailureLog } from '../common/failure-log.js';
import type { Logger } from '../common/log.js';
import type { BindSlotGate } from '../transports/smpp/smpp-transport.js';
import type { Transport } from '../transports/transport.js';
import { BindSlotKeeper, isSlottedTransport, type SlotSession } from './bind-slot-keeper.js';
import { parsePublishedSettings, type ConfigAgreement } from './config-agreement.js';
import { ClusterMembership, type BeatReport, type MembershipRegistry } from './membership.js';
import type { NodeIdSource } from '../common/node-id.js';
import type { ClusterStats } from '../admin/cluster-stats.js';
import type { ClusterReadiness } from '../admin/readiness.js';
import { NODE_HEARTBEAT_MS, NODE_LEASE_MS, type ReapHook } from '../store/postgres/node-registry.js';

/** The loops a node wakes: when work may have appeared that polling would find only later. */
export interface ClusterWakeTargets {
  /** Parts queued or requeued (the dispatch engine). */
  parts(): void;
  /** Outbox rows due or released (the webhook sender). */
  outbox(): void;
  /** Campaigns accepted or released (the campaign processor). */
  campaigns(): void;
}

/** A LISTEN session (PgWakeups): closed at stop. */
export interface WakeListener {
  close(): Promise<void>;
}

export interface ClusterRuntimeOptions {
  registry: MembershipRegistry;
  /** Run in the reaper's transaction (requeueExpiredNodes). */
  reapHooks: readonly ReapHook[];
  /** Opens a bind slot lock session; fairShare asks `liveNodes` (the count the last beat saw). */
  connectSlots(options: { onLost: (err: Error) => void; liveNodes: () => Promise<number> }): Promise<SlotSession>;
  /** Starts listening for wake-ups; its own reconnects are its business. Optional: polling only. */
  listen?(targets: ClusterWakeTargets): Promise<WakeListener>;
  /** Called last by stop() (the membership pool ends). */
  close?(): Promise<void>;
  /** Set before start(): the loops exist only after the runtime (their node id, their gate). */
  wake: ClusterWakeTargets;
  logger: Logger;
  /** This node's SMPP settings against the cluster's, updated at each beat; absent: not compared. */
  agreement?: ConfigAgreement;
  heartbeatMs?: number;
  /** The registry's lease (NODE_LEASE_MS unless the registry was given another): past it unbeaten, /ready says so. */
  leaseMs?: number;
  now?: () => number;
}

export class ClusterRuntime implements ClusterReadiness {
  readonly membership: ClusterMembership;
  readonly slots: BindSlotKeeper;
  private readonly logger: Logger;
  private readonly heartbeatMs: number;
  private readonly beatFailures: FailureLog;
  private heartbeat: BackgroundWorker | undefined;
  private slotSync: BackgroundWorker | undefined;
  private listener: WakeListener | undefined;
  private readonly listenFailures: FailureLog;
  private liveNodes = 1;
  private readonly now: () => number;
  private readonly leaseMs: number;
  /** When a beat last got through (the lease runs from there). */
  private lastBeatAtMs: number | undefined;
  private stopped = false;
  private readonly counters = { beats: 0, failedBeats: 0, rejoins: 0, nodesTakenOver: 0, rowsRequeued: 0 };

  constructor(private readonly options: ClusterRuntimeOptions) {
    this.logger = options.logger;
    this.heartbeatMs = options.heartbeatMs ?? NODE_HEARTBEAT_MS;
    const now = options.now ?? Date.now;
    this.now = now;
    this.leaseMs = options.leaseMs ?? NODE_LEASE_MS;
    this.membership = new ClusterMembership(options.registry, options.reapHooks);
    this.slots = new BindSlotKeeper({
      connect: (onLost) => options.connectSlots({ onLost, liveNodes: () => Promise.resolve(this.liveNodes) }),
      logger: options.logger,
      now,
      ...(options.agreement === undefined ? {} : { agreement: options.agreement }),
    });
    this.beatFailures = new FailureLog(options.logger, 'the cluster heartbeat (database unreachable?)', undefined, now);
    this.listenFailures = new FailureLog(options.logger, 'listening for wake-ups (polling meanwhile)', undefined, now);
  }

  stats(): ClusterStats {
    return { nodeId: this.membership.nodeId(), liveNodes: this.liveNodes, ...this.counters, slotSessionOpen: this.slots.connected };
  }

  membershipProblem(): string | null {
    if (this.lastBeatAtMs === undefined) return 'not a member of the cluster yet: no heartbeat has reached the database';
    const sinceMs = this.now() - this.lastBeatAtMs;
    if (sinceMs <= this.leaseMs) return null;
    return `cluster heartbeat failing for ${sinceMs} ms (lease ${this.leaseMs} ms): this node's work may have been taken over`;
  }

  configProblems(): string[] {
    return this.options.agreement?.problems() ?? [];
  }

  bindsHeldByPeers(transport: Transport): boolean {
    // With its slot session open, a slotted transport holding no slot tried every free one at its
    // last sync: the cluster's binds are all other nodes'.
    return isSlottedTransport(transport) && this.slots.connected && transport.heldSlots().length === 0;
  }

  /** The id claims and fenced writes are stamped with; it changes when a fenced node rejoins. */
  get node(): NodeIdSource {
    return this.membership;
  }

  /** What every SMPP transport built from config is given. */
  get slotGate(): BindSlotGate {
    return this.slots;
  }

  /**
   * Starts heartbeating (the first beat runs now, so the live-node count is known before any
   * transport asks for its share), opens the bind slot session and listens for wake-ups. The
   * transports' slots are synced from beginSlotSync on, once the engine started them.
   */
  async start(): Promise<void> {
    // The first beat also starts listening (beatOnce tries again while there is no listener).
    await this.beatOnce();
    await this.slots.ensureSession();
    this.heartbeat = new BackgroundWorker({
      intervalMs: this.heartbeatMs,
      pass: () => this.beatOnce(),
      onError: (err) => this.beatFailures.failed(err),
    });
    this.heartbeat.start();
    // Keeps the slot session open (reconnecting with backoff) from now on, and the slots of the
    // transports attached by beginSlotSync. Apart from the heartbeat: a connect that hangs, or a
    // bind draining slowly, never delays a beat.
    this.slotSync = new BackgroundWorker({
      intervalMs: this.heartbeatMs,
      pass: () => this.slots.sync(),
      onError: (err) => this.logger.error({ err }, 'syncing bind slots failed'),
    });
    this.slotSync.start();
    this.logger.info({ nodeId: this.membership.nodeId(), liveNodes: this.liveNodes }, 'joined the cluster');
  }

  /**
   * Keeps the SMPP transports' binds at this node's fair share from now on, on the slot loop.
   * Call after the transports were started (their start made the first sync): two syncs of one
   * transport must never run at once.
   */
  beginSlotSync(transports: readonly Transport[]): void {
    this.slots.attach(transports.filter(isSlottedTransport));
    this.slotSync?.wake();
  }

  /** Stops syncing slots (before the transports stop): the binds stay as they are until then. */
  async endSlotSync(): Promise<void> {
    await this.slotSync?.stop();
  }

  /**
   * Leaves the cluster: call after the engine drained (it requeued its own claims) and the sender
   * stopped. Heartbeats run until here, so a long drain never costs the lease. Then the slot
   * session closes (PostgreSQL releases the slots, after this node's binds were closed) and the
   * listener. Failures are logged: a node that cannot say goodbye expires instead.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.slotSync?.stop();
    await this.heartbeat?.stop();
    try {
      await this.membership.leave();
    } catch (err) {
      this.logger.warn({ err }, 'could not leave the cluster; the other nodes take over when this lease runs out');
    }
    await this.slots.close().catch((err: unknown) => this.logger.warn({ err }, 'closing the bind slot session failed'));
    await this.listener?.close().catch(() => undefined);
    this.listener = undefined;
    await this.options.close?.().catch((err: unknown) => this.logger.warn({ err }, 'closing the membership pool failed'));
  }

  private async beatOnce(): Promise<void> {
    let report: BeatReport;
    try {
      report = await this.membership.beat();
    } catch (err) {
      this.counters.failedBeats++;
      this.beatFailures.failed(err, { nodeId: this.membership.nodeId() });
      return;
    }
    this.counters.beats++;
    this.lastBeatAtMs = this.now();
    this.beatFailures.recovered();
    const { wake } = this.options;
    if (report.fenced !== undefined) {
      this.counters.rejoins++;
      this.logger.warn(report.fenced,
        'fenced out of the cluster: the lease ran out, so the work claimed under the former id is void (its writes are refused); rejoined under a new id');
    }
    if (report.tookOver.nodeIds.length > 0) {
      this.counters.nodesTakenOver += report.tookOver.nodeIds.length;
      this.counters.rowsRequeued += report.tookOver.rowsRequeued;
      this.logger.warn({ nodeIds: report.tookOver.nodeIds, rowsRequeued: report.tookOver.rowsRequeued },
        'took over from nodes whose lease ran out: their in-flight parts, outbox leases and campaigns are back in the queues');
    }
    if (report.fenced !== undefined || report.tookOver.rowsRequeued > 0) {
      wake.parts();
      wake.outbox();
      wake.campaigns();
    }
    const agreement = this.options.agreement;
    if (agreement !== undefined && report.settings !== undefined) {
      const published = report.settings.map((row) => ({ nodeId: row.id, startedAt: row.startedAt, settings: parsePublishedSettings(row.settings) }));
      // Which transports may bind (or how many nodes share their slots) changed: sync now.
      if (agreement.update(published)) this.slotSync?.wake();
    }
    if (report.liveNodes !== this.liveNodes) {
      this.logger.info({ liveNodes: report.liveNodes, before: this.liveNodes }, 'live nodes changed: rebalancing bind slots');
      this.liveNodes = report.liveNodes;
      this.slotSync?.wake();
    }
    if (this.listener === undefined) await this.tryListen();
  }

  private async tryListen(): Promise<void> {
    if (this.options.listen === undefined || this.stopped || this.listener !== undefined) return;
    try {
      const listener = await this.options.listen(this.options.wake);
      this.listenFailures.recovered();
      // Stopped while connecting: nobody would close it later.
      if (this.stopped) await listener.close();
      else this.listener = listener;
    } catch (err) {
      this.listenFailures.failed(err);
    }
  }
}

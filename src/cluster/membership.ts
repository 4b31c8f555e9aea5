/**
 * This node's membership of the cluster, one beat at a time: renew the lease,
 * and when it had run out (the node stalled, or lost the database, for longer than the lease),
 * rejoin under a new id; then take over whatever expired nodes held, and count the live nodes.
 * It is the NodeIdSource every claim and fenced write asks (src/common/node-id.ts): the id it
 * answers changes at a rejoin, so work claimed under the old id is refused by the stores' fences
 * and done by whoever claims it next (at-least-once).
 */
import type { NodeIdSource } from '../common/node-id.js';
import { NODE_HEARTBEAT_MS, NODE_LEASE_MS, type HeartbeatOutcome, type LiveNodeSettings, type NodeIdentity, type ReapHook } from '../store/postgres/node-registry.js';

/** The registry as a beat uses it (NodeRegistry, src/store/postgres/node-registry.ts). */
export interface MembershipRegistry {
  readonly identity: NodeIdentity;
  /** How long a renewed lease runs (NODE_LEASE_MS unless the registry was given another). */
  readonly leaseMs?: number;
  heartbeat(): Promise<HeartbeatOutcome>;
  rejoin(): Promise<NodeIdentity>;
  reapExpired(hooks: readonly ReapHook[]): Promise<{ nodeIds: string[]; requeued: number[] }>;
  liveNodes(): Promise<number>;
  /** The live nodes' published cluster-wide settings (the config agreement); absent: not compared. */
  liveSettings?(): Promise<LiveNodeSettings[]>;
  leave(): Promise<void>;
}

/** What one beat found; every field is about this beat only. */
export interface BeatReport {
  /** Set when the lease had run out: the id work was stamped with until now, and the new one. */
  fenced: { formerId: string; newId: string } | undefined;
  /** The expired nodes this beat took over (their rows deleted), and the rows it moved back to the queues. */
  tookOver: { nodeIds: string[]; rowsRequeued: number };
  /** Nodes whose lease has not run out, this one included. */
  liveNodes: number;
  /** Their published settings, when the registry reads them. */
  settings: LiveNodeSettings[] | undefined;
}

export class ClusterMembership implements NodeIdSource {
  /**
   * When (performance.now(), monotonic) the last heartbeat or join that the database confirmed was
   * SENT: the lease it renewed started later than that on the database's clock, so measuring from
   * here never overestimates what is left of it.
   */
  private confirmedSentAtMs: number | undefined;

  constructor(
    private readonly registry: MembershipRegistry,
    /** Run inside the reaper's transaction (src/store/postgres/node-takeover.ts requeueExpiredNodes). */
    private readonly reapHooks: readonly ReapHook[],
    private readonly monotonicMs: () => number = () => performance.now(),
  ) {}

  nodeId(): string {
    return this.registry.identity.id;
  }

  /**
   * See NodeIdSource.leaseHeld: true while the last confirmed beat was sent less than the lease
   * minus one heartbeat ago (the heartbeat's worth of margin covers a submit already under way).
   */
  leaseHeld(): boolean {
    // Before the first beat (the runtime beats once before the engine starts) nothing is confirmed.
    if (this.confirmedSentAtMs === undefined) return false;
    const leaseMs = this.registry.leaseMs ?? NODE_LEASE_MS;
    return this.monotonicMs() - this.confirmedSentAtMs < leaseMs - Math.min(NODE_HEARTBEAT_MS, leaseMs / 2);
  }

  get identity(): NodeIdentity {
    return this.registry.identity;
  }

  /**
   * One heartbeat. Throws when the database does not answer (the caller logs and beats again): the
   * lease then runs on, and if it runs out before a beat gets through, that beat answers fenced.
   */
  async beat(): Promise<BeatReport> {
    let fenced: BeatReport['fenced'];
    const sentAtMs = this.monotonicMs();
    if ((await this.registry.heartbeat()) === 'fenced') {
      const formerId = this.registry.identity.id;
      const rejoinSentAtMs = this.monotonicMs();
      fenced = { formerId, newId: (await this.registry.rejoin()).id };
      this.confirmedSentAtMs = rejoinSentAtMs;
    } else {
      this.confirmedSentAtMs = sentAtMs;
    }
    const reaped = await this.registry.reapExpired(this.reapHooks);
    const rowsRequeued = reaped.requeued.reduce((sum, n) => sum + n, 0);
    const liveNodes = await this.registry.liveNodes();
    const settings = await this.registry.liveSettings?.();
    return { fenced, tookOver: { nodeIds: reaped.nodeIds, rowsRequeued }, liveNodes, settings };
  }

  /** Leaves the cluster (a graceful stop, once this node's work was handed back). */
  leave(): Promise<void> {
    return this.registry.leave();
  }
}

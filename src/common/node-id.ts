/**
 * The id a node stamps its claims with. A single gateway on SQLite has none
 * (null): its claims are its own and a start-up requeues them all. A node of a cluster on
 * PostgreSQL has the id NodeRegistry gave it; the id changes when a node that was fenced out (its
 * lease ran out while it stalled) rejoins, so a claim asks for it when it claims, never keeps a
 * copy; the engine's outcome writes are fenced on the id their parts were claimed under (a stale
 * copy of a part claimed under the former id must not end the claim made under the new one).
 *
 * The engine, the campaign processor and the webhook outbox ask it; src/cluster provides it. It
 * lives beside the clock rather than in cluster/ so those layers depend on the question, not on
 * the cluster that answers it (the cluster imports them, not the reverse).
 */
export interface NodeIdSource {
  nodeId(): string | null;
  /**
   * False while this node cannot be sure its lease still runs: the last heartbeat the database
   * confirmed was sent longer ago than the lease allows (by this process's own monotonic clock).
   * A node frozen past its lease (SIGSTOP, a paused VM) wakes with messages it claimed before the
   * freeze still queued; its peers have requeued and sent those parts meanwhile. The stores refuse
   * its late writes, but the carrier would still get the submits: so it submits nothing until a
   * beat gets through again, which bounds the duplicates a freeze can cause. Absent: always true.
   */
  leaseHeld?(): boolean;
}

/** One gateway on its own database: no node id, every claim is this process's. */
export const SINGLE_GATEWAY: NodeIdSource = { nodeId: () => null, leaseHeld: () => true };

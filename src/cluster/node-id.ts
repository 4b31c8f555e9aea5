/**
 * The id a node stamps its claims with (issue 11 item 2). A single gateway on SQLite has none
 * (null): its claims are its own and a start-up requeues them all. A node of a cluster on
 * PostgreSQL has the id NodeRegistry gave it; the id changes when a node that was fenced out (its
 * lease ran out while it stalled) rejoins, so every writer asks for it at the moment it claims or
 * writes, never keeps a copy.
 */
export interface NodeIdSource {
  nodeId(): string | null;
}

/** One gateway on its own database: no node id, every claim is this process's. */
export const SINGLE_GATEWAY: NodeIdSource = { nodeId: () => null };

/**
 * What a cluster node's runtime has done since it started, as the admin listener reads it for the
 * cluster metrics and the status page. Defined here, beside the reader, so the admin folder needs
 * nothing of src/cluster: the runtime (src/cluster/cluster-runtime.ts) returns this shape.
 */
export interface ClusterStats {
  nodeId: string;
  /** Live nodes at the last beat that got through, this one included. */
  liveNodes: number;
  beats: number;
  /** Beats the database did not answer (each retried at the next beat). */
  failedBeats: number;
  /** Times this node found itself fenced out and rejoined under a new id. */
  rejoins: number;
  /** Expired nodes this node took over, and the rows it moved back to the queues for them. */
  nodesTakenOver: number;
  rowsRequeued: number;
  /** True while the bind slot session is open. */
  slotSessionOpen: boolean;
}

/**
 * The bind limit, decided once for both stores: an account with `maxBinds` may hold that many
 * live sessions across the cluster (a session is live while its node's heartbeat refreshes it).
 */

/** May one more session bind, with `liveSessions` already bound? null: no limit. */
export function bindSlotFree(liveSessions: number, maxBinds: number | null): boolean {
  return maxBinds === null || liveSessions < maxBinds;
}

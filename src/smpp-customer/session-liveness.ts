/**
 * When a customer's session counts as bound, for every node of a cluster: its node refreshes the
 * session's row (smpp_server_sessions.heartbeat_at) every SESSION_HEARTBEAT_INTERVAL_MS, and a row
 * older than SESSION_STALE_MS belongs to a node that died. Bind limits and where an inbound
 * message goes (SMPP or webhook) both judge a session by this one rule.
 */
export const SESSION_HEARTBEAT_INTERVAL_MS = 5_000;
/** Three beats missed, and some. */
export const SESSION_STALE_MS = 20_000;

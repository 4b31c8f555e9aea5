/** The PostgreSQL backend (issue 11): the stores, their factory and the pool helpers. */
export { createPgStores, type PgStores, type PgStoresOptions } from './stores.js';
export { PgAdminQueries } from './admin-queries.js';
export { PgAuthStore } from './auth-store.js';
export { PgCampaignRequestStore } from './campaign-request-store.js';
export { PgCampaignStore } from './campaign-store.js';
export { PgDispatchStore, type ArrivingReceipt, type RematchedReceipt, type StoredReceipt } from './dispatch-store.js';
export { PgInboundStore } from './inbound-store.js';
export { PgStatusQueries } from './status-queries.js';
export { PgUndecodablePduStore } from './undecodable-pdu-store.js';
export { PgWebhookStore } from './webhook-store.js';
export type { WebhookStorePort, AsyncQueries } from './contracts.js';
export { DEFAULT_POOL_SIZE, PG_TYPES, pgPoolConfig, type PgPool } from './pool.js';
export { notifyWake, PgWakeups, WAKE_CHANNELS, type WakeChannel, type WakeupOptions } from './wakeups.js';

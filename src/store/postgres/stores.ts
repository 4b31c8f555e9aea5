/**
 * Every PostgreSQL store over one pool: what a composition root hands the
 * services when `database.url` selects PostgreSQL, as the SQLite root hands `asyncPort(new X(db))`.
 * The pool comes from openDatabase (src/store/sqlite/database.ts): `{ kind: 'postgres', pool }`. The
 * member names are those of the seam's StorePorts (src/store/store-ports.ts on h-seam: auth,
 * campaigns, campaignRequests, inbound, undecodable, admin, status, webhooks), plus the engine's
 * dispatch store, so a PgStores is a StorePorts as it is.
 */
import type { SummaryCacheOptions } from '../sqlite/campaign-store.js';
import { PgAdminQueries } from './admin-queries.js';
import { PgAuthStore } from './auth-store.js';
import { PgCampaignRequestStore } from './campaign-request-store.js';
import { PgCampaignStore } from './campaign-store.js';
import { PgCreditStore } from './credit-store.js';
import { PgDispatchStore } from './dispatch-store.js';
import { PgIdempotencyStore } from './idempotency-store.js';
import { PgInboundStore } from './inbound-store.js';
import type { PgPool } from './pool.js';
import { PgSmppAccountStore, PgSmppSessionRegistry } from './smpp-account-store.js';
import { PgStatusQueries } from './status-queries.js';
import { PgUndecodablePduStore } from './undecodable-pdu-store.js';
import { PgWebhookStore } from './webhook-store.js';

export interface PgStores {
  readonly auth: PgAuthStore;
  readonly campaigns: PgCampaignStore;
  readonly campaignRequests: PgCampaignRequestStore;
  readonly inbound: PgInboundStore;
  readonly undecodable: PgUndecodablePduStore;
  readonly admin: PgAdminQueries;
  readonly status: PgStatusQueries;
  readonly dispatch: PgDispatchStore;
  readonly webhooks: PgWebhookStore;
  readonly credits: PgCreditStore;
  readonly idempotency: PgIdempotencyStore;
  readonly smppAccounts: PgSmppAccountStore;
  readonly smppSessions: PgSmppSessionRegistry;
}

export interface PgStoresOptions {
  /** CampaignStore's summary cache (tests step its clock). */
  summaryCache?: Partial<SummaryCacheOptions>;
}

export function createPgStores(pool: PgPool, options: PgStoresOptions = {}): PgStores {
  return {
    auth: new PgAuthStore(pool),
    campaigns: new PgCampaignStore(pool, options.summaryCache),
    campaignRequests: new PgCampaignRequestStore(pool),
    inbound: new PgInboundStore(pool),
    undecodable: new PgUndecodablePduStore(pool),
    admin: new PgAdminQueries(pool),
    status: new PgStatusQueries(pool),
    dispatch: new PgDispatchStore(pool),
    webhooks: new PgWebhookStore(pool),
    credits: new PgCreditStore(pool),
    idempotency: new PgIdempotencyStore(pool),
    smppAccounts: new PgSmppAccountStore(pool),
    smppSessions: new PgSmppSessionRegistry(pool),
  };
}

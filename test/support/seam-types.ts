/**
 * Compile-time half of the async store seam check (the grep half is
 * test/seam/consumers-use-ports.test.ts). `npm run build` type-checks this file: every consumer
 * outside the engine takes ports whose methods return promises, so any object with that shape
 * (PostgreSQL's classes) fits, and a synchronous SQLite store or a raw connection does not.
 * Nothing here runs: the functions are only type-checked.
 */
import { createAdminListener } from '../../src/admin/admin-listener.js';
import { createApiApp } from '../../src/api/app.js';
import { AuthService } from '../../src/auth/index.js';
import { CampaignProcessor, CampaignService } from '../../src/campaigns/index.js';
import type { SmsGateConfig } from '../../src/gateway/config.js';
import { InboundAdmin } from '../../src/inbound/inbound-admin.js';
import { InboundService } from '../../src/inbound/inbound-service.js';
import { silentLogger } from '../../src/common/log.js';
import type { AuthStore } from '../../src/store/sqlite/auth-store.js';
import type { Store } from '../../src/store/sqlite/database.js';
import type { SecretBox } from '../../src/store/secret-box.js';
import type { StorePorts } from '../../src/store/store-ports.js';

/** Every consumer built from nothing but a StorePorts: no Store, no connection. */
export async function wireFromPortsOnly(ports: StorePorts, config: SmsGateConfig, secretBox: SecretBox): Promise<void> {
  const logger = silentLogger();
  const auth = await AuthService.create(ports.auth, config.auth, secretBox);
  const processor = new CampaignProcessor({ store: ports, logger });
  const campaigns = new CampaignService({ store: ports, logger });
  createApiApp({ ports, auth, campaigns, config, logger });
  new InboundService({ store: ports.inbound, logger, wakeWebhooks: () => undefined });
  new InboundAdmin(ports.inbound);
  if (config.admin !== undefined) createAdminListener({ config: config.admin, ports, logger, now: Date.now });
  await processor.processOnce();
}

/** A port method answers with a promise whatever the backend. */
export async function portsAreAsync(ports: StorePorts): Promise<void> {
  const pending: Promise<unknown> = ports.auth.clientByName('acme');
  // @ts-expect-error a port's answer is a promise, not the row
  const row: { id: number } | undefined = ports.auth.clientByName('acme');
  void pending;
  void row;
}

/** What the consumers refuse: the synchronous SQLite store, and a raw store or connection. */
export async function syncStoresDoNotFit(
  syncAuthStore: AuthStore, store: Store, config: SmsGateConfig, secretBox: SecretBox, auth: AuthService, campaigns: CampaignService,
): Promise<void> {
  const logger = silentLogger();
  // @ts-expect-error a synchronous AuthStore is not its async port
  await AuthService.create(syncAuthStore, config.auth, secretBox);
  // @ts-expect-error the opened Store is not the auth port
  await AuthService.create(store, config.auth, secretBox);
  // @ts-expect-error InboundService takes the inbound port, not a connection
  new InboundService({ db: store.db, logger, wakeWebhooks: () => undefined });
  // @ts-expect-error the campaign service takes ports, not the Store
  new CampaignService({ store, logger });
  // @ts-expect-error the API takes ports, not the Store
  createApiApp({ store, auth, campaigns, config, logger });
}

/** Every migration, in order. Listed explicitly (no glob) so a build cannot pick up a stray file. */
import { InitialSchema1763740000000 } from '../../migrations/1763740000000-initial-schema.js';
import { MessagePartsClaimIndex1763900000000 } from '../../migrations/1763900000000-message-parts-claim-index.js';
import { WebhookEventIdentity1764200000001 } from '../../migrations/1764200000001-webhook-event-identity.js';
import { WebhookEventIdUnindexed1764200000002 } from '../../migrations/1764200000002-webhook-event-id-unindexed.js';

export const MIGRATIONS = [InitialSchema1763740000000, MessagePartsClaimIndex1763900000000, WebhookEventIdentity1764200000001, WebhookEventIdUnindexed1764200000002] as const;

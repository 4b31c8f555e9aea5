/** Every migration, in order. Listed explicitly (no glob) so a build cannot pick up a stray file. */
import { InitialSchema1763740000000 } from '../../migrations/1763740000000-initial-schema.js';
import { MessagePartsClaimIndex1763900000000 } from '../../migrations/1763900000000-message-parts-claim-index.js';
import { Inbound1764300000001 } from '../../migrations/1764300000001-inbound.js';
import { InboundListingIndex1764300000002 } from '../../migrations/1764300000002-inbound-listing-index.js';

export const MIGRATIONS = [InitialSchema1763740000000, MessagePartsClaimIndex1763900000000, Inbound1764300000001, InboundListingIndex1764300000002] as const;

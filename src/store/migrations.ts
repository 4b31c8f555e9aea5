/** Every migration, in order. Listed explicitly (no glob) so a build cannot pick up a stray file. */
import { InitialSchema1763740000000 } from '../../migrations/1763740000000-initial-schema.js';
import { MessagePartsClaimIndex1763900000000 } from '../../migrations/1763900000000-message-parts-claim-index.js';
import { CampaignRequestChunks1764600000001 } from '../../migrations/1764600000001-campaign-request-chunks.js';

export const MIGRATIONS = [InitialSchema1763740000000, MessagePartsClaimIndex1763900000000, CampaignRequestChunks1764600000001] as const;

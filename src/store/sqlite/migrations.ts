/** Every migration, in order. Listed explicitly (no glob) so a build cannot pick up a stray file. */
import { InitialSchema1763740000000 } from '../../../migrations/1763740000000-initial-schema.js';
import { MessagePartsClaimIndex1763900000000 } from '../../../migrations/1763900000000-message-parts-claim-index.js';
import { MessagePartsFairClaimIndex1764100000001 } from '../../../migrations/1764100000001-message-parts-fair-claim-index.js';
import { WebhookEventIdentity1764200000001 } from '../../../migrations/1764200000001-webhook-event-identity.js';
import { WebhookEventIdUnindexed1764200000002 } from '../../../migrations/1764200000002-webhook-event-id-unindexed.js';
import { Inbound1764300000001 } from '../../../migrations/1764300000001-inbound.js';
import { InboundListingIndex1764300000002 } from '../../../migrations/1764300000002-inbound-listing-index.js';
import { CampaignRequestChunks1764600000001 } from '../../../migrations/1764600000001-campaign-request-chunks.js';
import { UndecodablePdus1764700000001 } from '../../../migrations/1764700000001-undecodable-pdus.js';
import { ClusterNodes1765300000001 } from '../../../migrations/1765300000001-cluster-nodes.js';
import { ClusterClaims1765300000002 } from '../../../migrations/1765300000002-cluster-claims.js';
import { ClusterNodeSettings1765900000001 } from '../../../migrations/1765900000001-cluster-node-settings.js';
import { Accounts1766100000001 } from '../../../migrations/1766100000001-accounts.js';
import { SmppServer1766200000001 } from '../../../migrations/1766200000001-smpp-server.js';
import { SmppDeliveriesMessageIndex1766300000001 } from '../../../migrations/1766300000001-smpp-deliveries-message-index.js';
import { LiveRowIndexes1766400000001 } from '../../../migrations/1766400000001-live-row-indexes.js';
import { WebhookOutboxPartialIndexes1766400000002 } from '../../../migrations/1766400000002-webhook-outbox-partial-indexes.js';

export const MIGRATIONS = [
  InitialSchema1763740000000,
  MessagePartsClaimIndex1763900000000,
  MessagePartsFairClaimIndex1764100000001,
  WebhookEventIdentity1764200000001,
  WebhookEventIdUnindexed1764200000002,
  Inbound1764300000001,
  InboundListingIndex1764300000002,
  CampaignRequestChunks1764600000001,
  UndecodablePdus1764700000001,
  ClusterNodes1765300000001,
  ClusterClaims1765300000002,
  ClusterNodeSettings1765900000001,
  Accounts1766100000001,
  SmppServer1766200000001,
  SmppDeliveriesMessageIndex1766300000001,
  LiveRowIndexes1766400000001,
  WebhookOutboxPartialIndexes1766400000002,
] as const;

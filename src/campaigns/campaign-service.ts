/**
 * The campaign API's domain side: accept a request durably, read a summary, list senders.
 * Accepting only stores the request (one INSERT, synchronous=FULL, so a 202 survives kill -9 and a
 * power cut; a request whose recipients make more than one slice (CampaignRequest.recipientSlicesJson)
 * is stored in slices first, and its campaign row last); the CampaignProcessor turns it into recipients in the background.
 */
import { randomUUID } from 'node:crypto';
import type { PricingRule } from '../accounts/credits.js';
import type { IdempotencyDecision } from '../accounts/idempotency.js';
import { ERROR_CODE, GatewayError } from '../common/errors.js';
import type { Logger } from '../common/log.js';
import { yieldToEventLoop } from '../common/loop-turns.js';
import { DEFAULT_NUMBERING_COUNTRY, numberingPlanFor, type NumberingPlan } from '../sms/index.js';
import type { CampaignInsert, CampaignStore, SenderEntry } from '../store/sqlite/campaign-store.js';
import type { CampaignRequestStore } from '../store/sqlite/campaign-request-store.js';
import type { HeldKey, IdempotencyStore } from '../store/sqlite/idempotency-store.js';
import type { Async } from '../store/ports.js';
import { isTransientStoreFailure } from '../store/write-failures.js';
import { partsPerMessage, requestedNumberPrice } from './campaign-credits.js';
import { formatValidationDetail, RECIPIENTS_PER_REQUEST_SLICE, validateCampaignRequestInSlices, type CampaignRequest, type RecipientRequest } from './campaign-request.js';

/**
 * Slices of RECIPIENTS_PER_REQUEST_SLICE recipients per transaction: about 100 kB written per
 * commit, so no single write holds the event loop for long.
 */
export const SLICES_PER_TRANSACTION = 1;
export { RECIPIENTS_PER_REQUEST_SLICE };


/** Who acts: the authenticated identity's account (client) and user. Identity from src/auth fits. */
export interface CampaignOwner {
  clientId: number;
  userId: number;
}

/** SPEC.md "Campaign Summary". */
export interface CampaignSummary {
  totalSent: number;
  delivered: number;
  undelivered: number;
  pending: number;
}

/** Codes this module throws; src/api/http-errors.ts maps them to statuses. */
export const CAMPAIGN_ERROR = {
  invalidRequest: ERROR_CODE.CAMPAIGN_INVALID,
  invalidId: ERROR_CODE.CAMPAIGN_ID_INVALID,
  notFound: ERROR_CODE.CAMPAIGN_NOT_FOUND,
  /** The store refused the INSERT (disk full, read-only, locked past the busy timeout): nothing was accepted. */
  notStored: ERROR_CODE.CAMPAIGN_NOT_STORED,
  /** Too few credits available for the campaign's most it can cost: nothing was accepted. */
  creditsInsufficient: ERROR_CODE.CREDITS_INSUFFICIENT,
  /** The Idempotency-Key was used with another body. */
  keyReused: ERROR_CODE.IDEMPOTENCY_KEY_REUSED,
  /** A request under the Idempotency-Key is in flight. */
  keyInFlight: ERROR_CODE.IDEMPOTENCY_KEY_IN_FLIGHT,
} as const;

/** An Idempotency-Key request: the header's value and the sha-256 (hex) of the raw body bytes. */
export interface IdempotentRequest {
  key: string;
  requestHash: string;
}

/** What accept() stores: the campaign row and what it reserves and completes in the row's transaction. */
interface CampaignToStore {
  owner: CampaignOwner;
  id: string;
  state: 'queued' | 'draft';
  request: CampaignRequest;
  /** null: a draft, nothing reserved. */
  creditsNeeded: number | null;
  idempotencyKey: HeldKey | null;
}

function keyInFlight(): GatewayError {
  return new GatewayError(CAMPAIGN_ERROR.keyInFlight,
    'a request with this Idempotency-Key is still being processed; retry after it has been answered', { retryable: true });
}

/** RFC 9562 textual form, any case (ids are issued lowercase). */
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface CampaignServiceOptions {
  /** StorePorts' campaigns, campaignRequests and idempotency. */
  store: { campaigns: Async<CampaignStore>; campaignRequests: Async<CampaignRequestStore>; idempotency: Async<IdempotencyStore> };
  logger: Logger;
  /** Config `pricing`: what a part to a number costs; default none, every part 1 credit. */
  pricing?: readonly PricingRule[];
  /** How national numbers become international (config numbering.country), to price them as processing will. */
  numbering?: NumberingPlan;
  now?: () => number;
  newId?: () => string;
  /** Called after a campaign is stored in state 'queued' (the processor's wake()). */
  onQueued?: (campaignId: string) => void;
}

export class CampaignService {
  private readonly campaigns: Async<CampaignStore>;
  private readonly requests: Async<CampaignRequestStore>;
  private readonly keys: Async<IdempotencyStore>;
  private readonly pricing: readonly PricingRule[];
  private readonly numbering: NumberingPlan;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly newId: () => string;
  private readonly onQueued: (campaignId: string) => void;

  constructor(options: CampaignServiceOptions) {
    this.campaigns = options.store.campaigns;
    this.requests = options.store.campaignRequests;
    this.keys = options.store.idempotency;
    this.pricing = options.pricing ?? [];
    this.numbering = options.numbering ?? numberingPlanFor(DEFAULT_NUMBERING_COUNTRY);
    this.logger = options.logger.child({ component: 'campaigns' });
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? randomUUID;
    this.onQueued = options.onQueued ?? (() => undefined);
  }

  /**
   * accept() under an Idempotency-Key (IETF httpapi draft "The Idempotency-Key HTTP Header Field"):
   * the key's first request is accepted and its key then answers the same id for 24 hours
   * (src/accounts/idempotency.ts); the same body again gets that id without a second campaign or
   * reservation, another body IDEMPOTENCY_KEY_REUSED, and a request still in flight under the key
   * IDEMPOTENCY_KEY_IN_FLIGHT. A request that fails frees its key, so a retry can succeed.
   */
  async acceptOnce(owner: CampaignOwner, body: unknown, request: IdempotentRequest): Promise<{ id: string; replayed: boolean }> {
    const decision: IdempotencyDecision = await this.keys.claim(owner.clientId, request.key, request.requestHash, this.now());
    switch (decision.outcome) {
      case 'replay':
        return { id: decision.campaignId, replayed: true };
      case 'mismatch':
        throw new GatewayError(CAMPAIGN_ERROR.keyReused,
          'this Idempotency-Key was already used with a different request body; use a new key for a new request');
      case 'conflict':
        throw keyInFlight();
      case 'proceed':
        break;
    }
    const held: HeldKey = { key: request.key, claimedAtMs: decision.claimedAtMs };
    try {
      return { ...(await this.accept(owner, body, held)), replayed: false };
    } catch (err) {
      await this.keys.release(owner.clientId, request.key, decision.claimedAtMs).catch((releaseErr: unknown) => {
        // The key then answers 409 until its hold passes, and a retry takes it over.
        this.logger.warn({ err: releaseErr, clientId: owner.clientId }, 'could not free the Idempotency-Key of a failed request');
      });
      throw err;
    }
  }

  /**
   * Validates and stores a Create Campaign Request, reserving its most it can cost from the
   * client's credits in the transaction that stores it (drafts, never sent by this API, reserve
   * nothing). Throws GatewayError CAMPAIGN_INVALID whose message is the problem detail (every
   * failing field named) and details.errors the list; CREDITS_INSUFFICIENT when too few credits are
   * available (nothing is stored).
   */
  async accept(owner: CampaignOwner, body: unknown, idempotencyKey?: HeldKey): Promise<{ id: string }> {
    // The price of one part to each recipient, summed as validation reads them (pricing configured).
    let pricePerMessage = 0;
    const price = this.pricing.length === 0
      ? undefined
      : (recipient: RecipientRequest): void => {
        pricePerMessage += requestedNumberPrice(this.pricing, this.numbering, recipient.msisdn);
      };
    const result = await validateCampaignRequestInSlices(body, undefined, price);
    if (!result.ok) {
      throw new GatewayError(CAMPAIGN_ERROR.invalidRequest, formatValidationDetail(result.errors, result.errorCount), {
        details: { errors: result.errors, errorCount: result.errorCount },
      });
    }
    const { request } = result;
    const id = this.newId();
    const state = request.createAsDraft ? 'draft' : 'queued';
    const creditsNeeded = request.createAsDraft ? null : mostItCanCost(request, price === undefined ? null : pricePerMessage);
    let stored: CampaignInsert;
    try {
      const slices = request.recipientSlicesJson;
      const row = { owner, id, state, request, creditsNeeded, idempotencyKey: idempotencyKey ?? null } as const;
      stored = slices.length === 1 ? await this.insertCampaign(row, slices[0]!) : await this.insertInSlices(row);
    } catch (err) {
      await this.dropSlices(id);
      // A store that cannot serve now is the API's outage log's to report (once per outage, not per request).
      if (!isTransientStoreFailure(err)) this.logger.error({ err, clientId: owner.clientId }, 'campaign could not be stored');
      throw new GatewayError(CAMPAIGN_ERROR.notStored, 'the campaign could not be stored; nothing was accepted, retry later', {
        retryable: true,
        cause: err,
      });
    }
    if (stored.outcome !== 'stored') {
      await this.dropSlices(id);
      if (stored.outcome === 'key-lost') throw keyInFlight();
      throw new GatewayError(CAMPAIGN_ERROR.creditsInsufficient,
        `not enough credits: the campaign needs ${stored.needed} credits and ${stored.available} are available`,
        { details: { needed: stored.needed, available: stored.available } });
    }
    this.logger.info({ campaignId: id, clientId: owner.clientId, state, recipients: request.recipientCount, creditsReserved: stored.creditsReserved },
      'campaign accepted');
    if (state === 'queued') this.onQueued(id);
    return { id };
  }

  /**
   * A large request: its recipients as JSON slices, SLICES_PER_TRANSACTION per transaction with a
   * yield to the event loop between, then the campaign row, which alone makes them a campaign. A
   * failure part-way leaves only slices without a campaign, which dropSlices (or the processor's
   * start) deletes.
   */
  private async insertInSlices(row: CampaignToStore): Promise<CampaignInsert> {
    const slices = row.request.recipientSlicesJson;
    for (let seq = 0; seq < slices.length; seq += SLICES_PER_TRANSACTION) {
      if (seq > 0) await yieldToEventLoop();
      await this.requests.insertSlices(row.id, seq, slices.slice(seq, seq + SLICES_PER_TRANSACTION));
    }
    // The reservation is made with the campaign row, in its transaction.
    return this.insertCampaign(row, null);
  }

  /** Best effort: the store that refused a write may refuse this too; the processor's start retries. */
  private async dropSlices(id: string): Promise<void> {
    try {
      while ((await this.requests.deleteSlices(id, SLICES_PER_TRANSACTION * 10)) > 0);
    } catch (err) {
      this.logger.warn({ err, campaignId: id }, 'could not delete the slices of a refused campaign; deleted at next start');
    }
  }

  private insertCampaign({ owner, id, state, request, creditsNeeded, idempotencyKey }: CampaignToStore, requestRecipientsJson: string | null): Promise<CampaignInsert> {
    return this.campaigns.insertCampaign({
      id,
      clientId: owner.clientId,
      userId: owner.userId,
      state,
      name: request.campaignName,
      sender: request.from,
      text: request.text,
      sendAtLocal: request.sendAtLocal,
      createAsDraft: request.createAsDraft,
      shouldSaveList: request.shouldSaveList,
      requestRecipientsJson,
      createdAtMs: this.now(),
      creditsNeeded,
      idempotencyKey,
    });
  }

  /**
   * The summary of a ready campaign of the owner's account. Unknown ids, other accounts' campaigns,
   * drafts and campaigns still queued or processing are all CAMPAIGN_NOT_FOUND (SPEC: 404), so an
   * id reveals nothing about another account.
   */
  async summary(owner: CampaignOwner, id: string): Promise<CampaignSummary> {
    if (!UUID_PATTERN.test(id)) throw new GatewayError(CAMPAIGN_ERROR.invalidId, 'id must be a valid UUID');
    const campaign = await this.campaigns.findCampaign(id.toLowerCase());
    if (campaign === undefined || campaign.client_id !== owner.clientId || campaign.state !== 'ready') {
      throw new GatewayError(CAMPAIGN_ERROR.notFound, `campaign ${id} was not found`);
    }
    const counts = await this.campaigns.statusCounts(campaign.id);
    return {
      totalSent: campaign.total_sent ?? 0,
      delivered: counts.delivered,
      undelivered: counts.undelivered,
      pending: counts.pending,
    };
  }

  /** The account's sender ids (legacy v2 sender list). */
  async senders(owner: Pick<CampaignOwner, 'clientId'>): Promise<SenderEntry[]> {
    return this.campaigns.senders(owner.clientId);
  }
}

/**
 * Reserved at acceptance (docs/behaviour/credits.md): every requested recipient x the parts of the text x the
 * price of a part to it. Duplicates and numbers processing will skip are counted too (the most it
 * can cost); processing releases what they will never use. `pricePerMessage`: the recipients'
 * prices of one part summed during validation; null without pricing, every part costing 1.
 */
function mostItCanCost(request: CampaignRequest, pricePerMessage: number | null): number {
  const parts = partsPerMessage(request.text);
  return (pricePerMessage ?? request.recipientCount) * parts;
}

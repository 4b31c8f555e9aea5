/**
 * The campaign API's domain side: accept a request durably, read a summary, list senders.
 * Accepting only stores the request (one INSERT, synchronous=FULL, so a 202 survives kill -9 and a
 * power cut; a request of more than RECIPIENTS_PER_REQUEST_SLICE recipients is stored in slices
 * first, and its campaign row last); the CampaignProcessor turns it into recipients in the background.
 */
import { randomUUID } from 'node:crypto';
import { ERROR_CODE, GatewayError } from '../common/errors.js';
import type { Logger } from '../common/log.js';
import { yieldToEventLoop } from '../common/loop-turns.js';
import type { CampaignStore, SenderEntry } from '../store/sqlite/campaign-store.js';
import type { CampaignRequestStore } from '../store/sqlite/campaign-request-store.js';
import type { Async } from '../store/ports.js';
import { isTransientStoreFailure } from '../store/write-failures.js';
import { formatValidationDetail, RECIPIENTS_PER_REQUEST_SLICE, validateCampaignRequestInSlices, type CampaignRequest } from './campaign-request.js';

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
} as const;

/** RFC 9562 textual form, any case (ids are issued lowercase). */
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface CampaignServiceOptions {
  /** StorePorts' campaigns and campaignRequests. */
  store: { campaigns: Async<CampaignStore>; campaignRequests: Async<CampaignRequestStore> };
  logger: Logger;
  now?: () => number;
  newId?: () => string;
  /** Called after a campaign is stored in state 'queued' (the processor's wake()). */
  onQueued?: (campaignId: string) => void;
}

export class CampaignService {
  private readonly campaigns: Async<CampaignStore>;
  private readonly requests: Async<CampaignRequestStore>;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly newId: () => string;
  private readonly onQueued: (campaignId: string) => void;

  constructor(options: CampaignServiceOptions) {
    this.campaigns = options.store.campaigns;
    this.requests = options.store.campaignRequests;
    this.logger = options.logger.child({ component: 'campaigns' });
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? randomUUID;
    this.onQueued = options.onQueued ?? (() => undefined);
  }

  /**
   * Validates and stores a Create Campaign Request. Throws GatewayError CAMPAIGN_INVALID whose
   * message is the problem detail (every failing field named) and details.errors the list.
   */
  async accept(owner: CampaignOwner, body: unknown): Promise<{ id: string }> {
    const result = await validateCampaignRequestInSlices(body);
    if (!result.ok) {
      throw new GatewayError(CAMPAIGN_ERROR.invalidRequest, formatValidationDetail(result.errors, result.errorCount), {
        details: { errors: result.errors, errorCount: result.errorCount },
      });
    }
    const { request } = result;
    const id = this.newId();
    const state = request.createAsDraft ? 'draft' : 'queued';
    try {
      const slices = request.recipientSlicesJson;
      if (slices.length === 1) await this.insertCampaign(owner, id, state, request, slices[0]!);
      else await this.insertInSlices(owner, id, state, request);
    } catch (err) {
      await this.dropSlices(id);
      // A store that cannot serve now is the API's outage log's to report (once per outage, not per request).
      if (!isTransientStoreFailure(err)) this.logger.error({ err, clientId: owner.clientId }, 'campaign could not be stored');
      throw new GatewayError(CAMPAIGN_ERROR.notStored, 'the campaign could not be stored; nothing was accepted, retry later', {
        retryable: true,
        cause: err,
      });
    }
    this.logger.info({ campaignId: id, clientId: owner.clientId, state, recipients: request.recipientCount }, 'campaign accepted');
    if (state === 'queued') this.onQueued(id);
    return { id };
  }

  /**
   * A large request: its recipients as JSON slices, SLICES_PER_TRANSACTION per transaction with a
   * yield to the event loop between, then the campaign row, which alone makes them a campaign. A
   * failure part-way leaves only slices without a campaign, which dropSlices (or the processor's
   * start) deletes.
   */
  private async insertInSlices(owner: CampaignOwner, id: string, state: 'queued' | 'draft', request: CampaignRequest): Promise<void> {
    const slices = request.recipientSlicesJson;
    for (let seq = 0; seq < slices.length; seq += SLICES_PER_TRANSACTION) {
      if (seq > 0) await yieldToEventLoop();
      await this.requests.insertSlices(id, seq, slices.slice(seq, seq + SLICES_PER_TRANSACTION));
    }
    await this.insertCampaign(owner, id, state, request, null);
  }

  /** Best effort: the store that refused a write may refuse this too; the processor's start retries. */
  private async dropSlices(id: string): Promise<void> {
    try {
      while ((await this.requests.deleteSlices(id, SLICES_PER_TRANSACTION * 10)) > 0);
    } catch (err) {
      this.logger.warn({ err, campaignId: id }, 'could not delete the slices of a refused campaign; deleted at next start');
    }
  }

  private insertCampaign(owner: CampaignOwner, id: string, state: 'queued' | 'draft', request: CampaignRequest, requestRecipientsJson: string | null): Promise<void> {
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

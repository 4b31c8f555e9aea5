/**
 * Turns queued campaigns into recipients and marks them ready (SPEC.md "Recipient processing
 * rules", "Scheduling"). Runs in the background: woken after each accept, and polling as a safety
 * net. A campaign's recipients are written in transactions of RECIPIENTS_PER_TRANSACTION, yielding
 * to the event loop between them, so a 100,000-recipient campaign never blocks the API for long;
 * the engine sees none of them until the final transaction marks the campaign ready.
 * Crash recovery: a campaign left in 'processing' (by a crash, a stop or a busy database) is redone
 * from the start: the recipients an earlier attempt wrote are deleted first, so redoing is idempotent.
 */
import { creditsPerPart, type PricingRule } from '../accounts/credits.js';
import { BackgroundWorker } from '../common/background-worker.js';
import type { Clock } from '../common/clock.js';
import { SINGLE_GATEWAY, type NodeIdSource } from '../common/node-id.js';
import { FailureLog } from '../common/failure-log.js';
import { isGatewayError } from '../common/errors.js';
import type { Logger } from '../common/log.js';
import { yieldToEventLoop } from '../common/loop-turns.js';
import { analyzeText } from '../sms/index.js';
import type { CampaignStore, CampaignToProcess, ReadyCampaign, RecipientToWrite } from '../store/sqlite/campaign-store.js';
import type { CampaignRequestStore } from '../store/sqlite/campaign-request-store.js';
import type { InboundStore } from '../store/sqlite/inbound-store.js';
import type { Async } from '../store/ports.js';
import { isPostgresRefusal } from '../store/write-refusal.js';
import { settleAtProcessing } from './campaign-credits.js';
import { readStoredRecipients, type RecipientRequest } from './campaign-request.js';
import { isPermittedForIreland, RecipientPlanner } from './recipient-plan.js';
import { DEFAULT_NUMBERING_COUNTRY, numberingPlanFor, type NumberingPlan } from '../sms/index.js';
import { localToUtcMs, parseSendAt, SEND_AT_ZONE } from './send-at.js';

export interface CampaignProcessorOptions {
  /** StorePorts' campaigns, campaignRequests and inbound (the suppression lists). */
  store: { campaigns: Async<CampaignStore>; campaignRequests: Async<CampaignRequestStore>; inbound: Async<InboundStore> };
  logger: Logger;
  now?: () => number;
  /** Safety-net poll for campaigns nobody woke the processor for (config processing.pollIntervalMs). */
  pollIntervalMs?: number;
  /** The poll sleeps run on this clock (default: the system clock). */
  clock?: Clock;
  /** Called after a campaign is marked ready (the engine's wake-up). */
  onReady?: (campaignId: string) => void;
  /** How national numbers become international (config numbering.country); default Ireland's (SPEC.md). */
  numbering?: NumberingPlan;
  /** The zone sendAt is read in (config scheduling.timeZone); default Europe/Dublin (SPEC.md). */
  timeZone?: string;
  /**
   * The node this processor runs on (each campaign is processed to ready by one
   * node). Asked at every claim and write, because a node that was fenced out rejoins with a new
   * id. Default SINGLE_GATEWAY: no id, every campaign is this process's (SQLite).
   */
  node?: NodeIdSource;
  /**
   * Config `pricing`: each kept recipient's price per part is fixed from it when its campaign is
   * processed (recipients.credits_per_part); default none, every part 1 credit.
   */
  pricing?: readonly PricingRule[];
}

export const DEFAULT_PROCESSING_POLL_INTERVAL_MS = 200;
/** Campaign ids fetched per pass; the pass repeats while there is work. */
const CAMPAIGNS_PER_PASS = 50;
/**
 * Recipients written per transaction. 1,000 rows take a few milliseconds (5,000 took 60 ms on the
 * loaded 2-core build machine, one loop turn, while a 1,000,000-recipient campaign was written), so
 * the API and the engine get the event loop (and the writer lock) back often. The transactions
 * commit without an fsync of their own (CampaignStore.appendRecipients): the ready mark's commit
 * makes them durable, so a smaller transaction costs no extra sync.
 */
export const RECIPIENTS_PER_TRANSACTION = 1_000;
/** Recipients normalised and deduplicated between two yields to the event loop. */
const RECIPIENTS_PLANNED_PER_SLICE = 1_000;
/** Stored request slices deleted per transaction once a campaign is ready. */
const SLICES_DELETED_PER_TRANSACTION = 4;
/**
 * SQLite codes that mean "try again later", not "this campaign is broken"; PostgreSQL's are
 * isPostgresRefusal's (a dropped connection, a full disk, a shutdown, a serialization failure).
 */
const TRANSIENT_SQLITE_CODES: ReadonlySet<string> = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_IOERR', 'SQLITE_FULL']);

export class CampaignProcessor {
  private readonly campaigns: Async<CampaignStore>;
  /** The suppression lists (opt-out keywords), read when each campaign is processed. */
  private readonly optouts: Async<InboundStore>;
  private readonly requests: Async<CampaignRequestStore>;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly pollIntervalMs: number;
  private readonly onReady: (campaignId: string) => void;
  private readonly numbering: NumberingPlan;
  private readonly timeZone: string;
  private readonly clock: Clock | undefined;
  private readonly node: NodeIdSource;
  private readonly pricing: readonly PricingRule[];
  private readonly passFailures: FailureLog;
  /** The polling loop while started; a new one per start() (a BackgroundWorker runs once). */
  private worker: BackgroundWorker | undefined;
  /** Set by stop(): the campaign being written is left in 'processing' and redone on the next start. */
  private stopRequested = false;

  constructor(options: CampaignProcessorOptions) {
    this.campaigns = options.store.campaigns;
    this.optouts = options.store.inbound;
    this.requests = options.store.campaignRequests;
    this.logger = options.logger.child({ component: 'campaign-processor' });
    this.now = options.now ?? Date.now;
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_PROCESSING_POLL_INTERVAL_MS;
    this.clock = options.clock;
    this.onReady = options.onReady ?? (() => undefined);
    this.numbering = options.numbering ?? numberingPlanFor(DEFAULT_NUMBERING_COUNTRY);
    this.timeZone = options.timeZone ?? SEND_AT_ZONE;
    this.node = options.node ?? SINGLE_GATEWAY;
    this.pricing = options.pricing ?? [];
    this.passFailures = new FailureLog(this.logger, 'campaign processing', undefined, this.now);
  }

  /** This node's id for the store's stamp and fence, or undefined for one gateway (src/common/node-id.ts). */
  private nodeId(): string | undefined {
    return this.node.nodeId() ?? undefined;
  }

  /** Processes everything left queued or processing (crash recovery), then keeps polling. */
  start(): void {
    if (this.worker !== undefined) return;
    // The first pass waits for this: nothing is accepted into slices before start.
    const leftovers = this.deleteLeftoverSlices();
    this.stopRequested = false;
    this.worker = new BackgroundWorker({
      intervalMs: this.pollIntervalMs,
      pass: async () => {
        await leftovers;
        await this.processOnce();
        this.passFailures.recovered();
      },
      // A database that is gone fails every pass (five a second at the default poll): logged once,
      // then at most every 30 s (a PostgreSQL failover, or a full disk).
      onError: (err) => this.passFailures.failed(err),
      ...(this.clock === undefined ? {} : { clock: this.clock }),
    });
    this.worker.start();
  }

  /**
   * Request slices left by an accept that never stored its campaign row (a crash, a refused write),
   * and by campaigns processed while the delete failed. Nothing is being accepted at start.
   */
  private async deleteLeftoverSlices(): Promise<void> {
    try {
      const deleted = (await this.requests.deleteOrphans()) + (await this.requests.deleteProcessed());
      if (deleted > 0) this.logger.info({ slices: deleted }, 'deleted leftover campaign request slices');
    } catch (err) {
      this.logger.warn({ err }, 'could not delete leftover campaign request slices');
    }
  }

  /** Runs a pass soon; a wake during a pass makes another pass follow it. */
  wake(): void {
    this.worker?.wake();
  }

  /**
   * Stops polling and waits for the pass in progress, which gives up at its next chunk: a campaign
   * half written stays 'processing' and is redone on the next start(). Until start() is called
   * again, processOnce() does nothing.
   */
  async stop(): Promise<void> {
    this.stopRequested = true;
    const worker = this.worker;
    this.worker = undefined;
    await worker?.stop();
  }

  /**
   * One pass over every campaign still queued or processing, oldest first. Returns how many were
   * marked ready. Safe to call directly (tests, embedding) when the processor is not started.
   */
  async processOnce(): Promise<number> {
    let readyCount = 0;
    const attempted = new Set<string>();
    for (;;) {
      const ids = (await this.campaigns.unprocessedCampaignIds(CAMPAIGNS_PER_PASS, this.nodeId())).filter((id) => !attempted.has(id));
      if (ids.length === 0) return readyCount;
      for (const id of ids) {
        if (this.stopRequested) return readyCount;
        attempted.add(id);
        if (await this.processCampaign(id)) readyCount++;
        // Let the API answer between campaigns.
        await yieldToEventLoop();
      }
    }
  }

  /** Returns true when the campaign was marked ready by this call. */
  private async processCampaign(id: string): Promise<boolean> {
    // The id the claim is stamped with fences every later write of this attempt: a node fenced out
    // meanwhile (and rejoined under a new id) has its writes refused and leaves the campaign to the
    // node that claims it next, so one node carries it to ready.
    const nodeId = this.nodeId();
    const campaign = await this.campaigns.claimForProcessing(id, nodeId);
    if (campaign === undefined) return false;
    const log = this.logger.child({ campaignId: id });
    try {
      if (!(await this.deletePartialRecipients(id, nodeId))) return false;
      const ready = await this.planAndWrite(campaign, nodeId);
      if (ready === undefined) return false;
      if (!(await this.campaigns.markReady(ready, nodeId))) return false;
      await this.dropRequestSlices(id);
      log.info({ totalSent: ready.totalSent, skipped: ready.skippedCount, sendAtMs: ready.sendAtMs }, 'campaign ready');
    } catch (err) {
      if (isTransient(err)) {
        // Left in 'processing': the next pass (or the next start) redoes it from scratch.
        log.warn({ err }, 'campaign processing interrupted; will retry');
        return false;
      }
      const reason = isGatewayError(err) ? err.code : err instanceof Error ? err.message : String(err);
      log.error({ err }, 'campaign processing failed; campaign marked failed');
      await this.campaigns.markFailed(id, reason, nodeId);
      return false;
    }
    this.onReady(id);
    return true;
  }

  /**
   * Deletes whatever an earlier attempt wrote, a chunk per transaction. False when the campaign left
   * 'processing' meanwhile; it then stays as whatever moved it.
   */
  private async deletePartialRecipients(campaignId: string, nodeId: string | undefined): Promise<boolean> {
    for (;;) {
      const deleted = await this.campaigns.deletePartialRecipients(campaignId, RECIPIENTS_PER_TRANSACTION, nodeId);
      if (deleted === undefined) return false;
      if (deleted < RECIPIENTS_PER_TRANSACTION) return true;
      await yieldToEventLoop();
    }
  }

  /** The request's recipients: the one JSON column of a small request, else its stored slices in order. */
  private async *requestedSlices(campaign: CampaignToProcess): AsyncGenerator<RecipientRequest[]> {
    if (campaign.request_recipients !== null) {
      yield readStoredRecipients(campaign.request_recipients);
      return;
    }
    const sliceCount = await this.requests.sliceCount(campaign.id);
    if (sliceCount === 0) throw new Error('campaign has no stored recipients');
    for (let seq = 0; seq < sliceCount; seq++) {
      const json = await this.requests.slice(campaign.id, seq);
      if (json === undefined) throw new Error(`stored recipients slice ${seq} is missing`);
      yield readStoredRecipients(json);
    }
  }

  /** The request is no longer needed once the recipients are rows; a failure here only costs space. */
  private async dropRequestSlices(campaignId: string): Promise<void> {
    try {
      while ((await this.requests.deleteSlices(campaignId, SLICES_DELETED_PER_TRANSACTION)) > 0) await yieldToEventLoop();
    } catch (err) {
      this.logger.warn({ err, campaignId }, 'could not delete the stored request slices; deleted at next start');
    }
  }

  /**
   * Plans the recipients a slice at a time and writes those kept as it goes, a transaction of
   * RECIPIENTS_PER_TRANSACTION at a time, yielding to the event loop between slices and between
   * transactions: a campaign of a million recipients never holds the loop for long, and never has
   * all its planned recipients in memory at once (only the numbers seen, to find duplicates).
   * Returns what marks it ready, or undefined when the campaign left 'processing' meanwhile or a
   * stop was requested: it then stays 'processing' (or whatever moved it) and the next pass or start
   * redoes it from the beginning.
   */
  private async planAndWrite(campaign: CampaignToProcess, nodeId: string | undefined): Promise<ReadyCampaign | undefined> {
    const senderType = await this.campaigns.senderType(campaign.client_id, campaign.sender);
    const suppressed = await this.optouts.suppressedNumbers(campaign.client_id);
    const planner = new RecipientPlanner({ senderPermittedForIreland: isPermittedForIreland(senderType), numbering: this.numbering, suppressed });
    const analysis = analyzeText(campaign.text);
    const nowMs = this.now();
    // Before any write: a stored sendAt that cannot be read fails the campaign with nothing written.
    const sendAtMs = sendAtInstantMs(campaign.send_at_local, nowMs, this.timeZone);
    // A campaign accepted for an unlimited client (nothing reserved) is never charged: price 0.
    const reserved = campaign.credits_reserved;
    const keptPrices: number[] = [];
    let pending: RecipientToWrite[] = [];
    const write = async (): Promise<boolean> => {
      const chunk = pending;
      pending = [];
      if (this.stopRequested) return false;
      const written = await this.campaigns.appendRecipients(campaign.id, chunk, nowMs, nodeId);
      await yieldToEventLoop();
      return written;
    };
    let requestedCount = 0;
    for await (const slice of this.requestedSlices(campaign)) {
      for (let start = 0; start < slice.length; start += RECIPIENTS_PLANNED_PER_SLICE) {
        planner.add(slice.slice(start, start + RECIPIENTS_PLANNED_PER_SLICE));
        for (const r of planner.drainAccepted()) {
          const price = reserved === null ? 0 : creditsPerPart(this.pricing, r.msisdn);
          keptPrices.push(price);
          pending.push({ msisdn: r.msisdn, clientReference: r.clientReference, creditsPerPart: price });
          if (pending.length === RECIPIENTS_PER_TRANSACTION && !(await write())) return undefined;
        }
        await yieldToEventLoop();
      }
      requestedCount += slice.length;
    }
    if (pending.length > 0 && !(await write())) return undefined;
    const totalSent = planner.acceptedCount;
    return {
      campaignId: campaign.id,
      totalSent,
      textSent: analysis.text,
      encoding: analysis.encoding,
      partsPerMessage: analysis.parts,
      sendAtMs,
      skippedCount: requestedCount - totalSent,
      readyAtMs: nowMs,
      // What skipped and duplicate recipients will never use goes back with the ready mark.
      credits: settleAtProcessing(campaign.client_id, campaign.id, reserved, analysis.parts, keptPrices),
    };
  }
}

/**
 * SPEC.md Scheduling: sendAt is Europe/Dublin wall time (or the deployment's scheduling.timeZone),
 * seconds dropped; omitted means now. Past times are kept as given: the engine sends anything whose
 * send_at has passed at once.
 */
export function sendAtInstantMs(sendAtLocal: string | null, nowMs: number, timeZone: string = SEND_AT_ZONE): number {
  if (sendAtLocal === null) return nowMs;
  const parsed = parseSendAt(sendAtLocal);
  if (!parsed.ok) throw new Error(`stored sendAt '${sendAtLocal}' ${parsed.reason}`);
  return localToUtcMs(parsed.local, timeZone);
}



function isTransient(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && ([...TRANSIENT_SQLITE_CODES].some((c) => code.startsWith(c)) || isPostgresRefusal(err));
}

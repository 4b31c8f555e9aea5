/**
 * Turns queued campaigns into recipients and marks them ready (SPEC.md "Recipient processing
 * rules", "Scheduling"). Runs in the background: woken after each accept, and polling as a safety
 * net. A campaign's recipients are written in transactions of RECIPIENTS_PER_TRANSACTION, yielding
 * to the event loop between them, so a 100,000-recipient campaign never blocks the API for long;
 * the engine sees none of them until the final transaction marks the campaign ready.
 * Crash recovery: a campaign left in 'processing' (by a crash, a stop or a busy database) is redone
 * from the start: the recipients an earlier attempt wrote are deleted first, so redoing is idempotent.
 */
import { isGatewayError } from '../errors.js';
import type { Logger } from '../log.js';
import { analyzeText } from '../sms/index.js';
import type { Store } from '../store/database.js';
import { CampaignStore, type CampaignToProcess, type ReadyCampaign, type RecipientToWrite } from '../store/campaign-store.js';
import { InboundStore } from '../store/inbound-store.js';
import type { RecipientRequest } from './campaign-request.js';
import { isPermittedForIreland, planRecipients } from './recipient-plan.js';
import { dublinLocalToUtcMs, parseSendAt } from './send-at.js';

export interface CampaignProcessorOptions {
  store: Store;
  logger: Logger;
  now?: () => number;
  /** Safety-net poll for campaigns nobody woke the processor for (config processing.pollIntervalMs). */
  pollIntervalMs?: number;
  /** Called after a campaign is marked ready (the engine's wake-up). */
  onReady?: (campaignId: string) => void;
}

export const DEFAULT_PROCESSING_POLL_INTERVAL_MS = 200;
/** Campaign ids fetched per pass; the pass repeats while there is work. */
const CAMPAIGNS_PER_PASS = 50;
/**
 * Recipients written per transaction. 5,000 rows take a few milliseconds, so the API and the engine
 * get the event loop (and the writer lock) back often while a large campaign is written.
 */
export const RECIPIENTS_PER_TRANSACTION = 5_000;
/** SQLite codes that mean "try again later", not "this campaign is broken". */
const TRANSIENT_SQLITE_CODES: ReadonlySet<string> = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_IOERR', 'SQLITE_FULL']);

export class CampaignProcessor {
  private readonly campaigns: CampaignStore;
  /** The suppression lists (opt-out keywords, issue 14), read when each campaign is processed. */
  private readonly optouts: InboundStore;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly pollIntervalMs: number;
  private readonly onReady: (campaignId: string) => void;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private rerunRequested = false;
  private started = false;
  /** Set by stop(): the campaign being written is left in 'processing' and redone on the next start. */
  private stopRequested = false;

  constructor(options: CampaignProcessorOptions) {
    this.campaigns = new CampaignStore(options.store.db);
    this.optouts = new InboundStore(options.store.db);
    this.logger = options.logger.child({ component: 'campaign-processor' });
    this.now = options.now ?? Date.now;
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_PROCESSING_POLL_INTERVAL_MS;
    this.onReady = options.onReady ?? (() => undefined);
  }

  /** Processes everything left queued or processing (crash recovery), then keeps polling. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopRequested = false;
    this.wake();
  }

  /** Runs a pass soon; a wake during a pass makes another pass follow it. */
  wake(): void {
    if (!this.started) return;
    if (this.running !== undefined) {
      this.rerunRequested = true;
      return;
    }
    this.clearTimer();
    this.timer = setTimeout(() => void this.runPass(), 0);
  }

  /**
   * Stops polling and waits for the pass in progress, which gives up at its next chunk: a campaign
   * half written stays 'processing' and is redone on the next start(). Until start() is called
   * again, processOnce() does nothing.
   */
  async stop(): Promise<void> {
    this.started = false;
    this.stopRequested = true;
    this.clearTimer();
    if (this.running !== undefined) await this.running;
  }

  /**
   * One pass over every campaign still queued or processing, oldest first. Returns how many were
   * marked ready. Safe to call directly (tests, embedding) when the processor is not started.
   */
  async processOnce(): Promise<number> {
    let readyCount = 0;
    const attempted = new Set<string>();
    for (;;) {
      const ids = this.campaigns.unprocessedCampaignIds(CAMPAIGNS_PER_PASS).filter((id) => !attempted.has(id));
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

  private async runPass(): Promise<void> {
    this.timer = undefined;
    this.running = this.processOnce().catch((err: unknown) => {
      this.logger.error({ err }, 'campaign processing pass failed');
      return 0;
    });
    await this.running;
    this.running = undefined;
    if (!this.started) return;
    if (this.rerunRequested) {
      this.rerunRequested = false;
      this.timer = setTimeout(() => void this.runPass(), 0);
    } else {
      this.timer = setTimeout(() => void this.runPass(), this.pollIntervalMs);
    }
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Returns true when the campaign was marked ready by this call. */
  private async processCampaign(id: string): Promise<boolean> {
    const campaign = this.campaigns.claimForProcessing(id);
    if (campaign === undefined) return false;
    const log = this.logger.child({ campaignId: id });
    try {
      const { recipients, ready } = this.prepare(campaign);
      if (!(await this.writeRecipients(id, recipients, ready.readyAtMs))) return false;
      if (!this.campaigns.markReady(ready)) return false;
      log.info({ totalSent: ready.totalSent, skipped: ready.skippedCount, sendAtMs: ready.sendAtMs }, 'campaign ready');
    } catch (err) {
      if (isTransient(err)) {
        // Left in 'processing': the next pass (or the next start) redoes it from scratch.
        log.warn({ err }, 'campaign processing interrupted; will retry');
        return false;
      }
      const reason = isGatewayError(err) ? err.code : err instanceof Error ? err.message : String(err);
      log.error({ err }, 'campaign processing failed; campaign marked failed');
      this.campaigns.markFailed(id, reason);
      return false;
    }
    this.onReady(id);
    return true;
  }

  /**
   * Replaces whatever an earlier attempt wrote with the planned recipients, a chunk per transaction.
   * False when the campaign left 'processing' meanwhile or a stop was requested; it then stays
   * 'processing' (or whatever moved it) and the next pass or start redoes it from the beginning.
   */
  private async writeRecipients(campaignId: string, recipients: readonly RecipientToWrite[], updatedAtMs: number): Promise<boolean> {
    for (;;) {
      const deleted = this.campaigns.deletePartialRecipients(campaignId, RECIPIENTS_PER_TRANSACTION);
      if (deleted === undefined) return false;
      if (deleted < RECIPIENTS_PER_TRANSACTION) break;
      await yieldToEventLoop();
    }
    for (let start = 0; start < recipients.length; start += RECIPIENTS_PER_TRANSACTION) {
      if (start > 0) await yieldToEventLoop();
      if (this.stopRequested) return false;
      const chunk = recipients.slice(start, start + RECIPIENTS_PER_TRANSACTION);
      if (!this.campaigns.appendRecipients(campaignId, chunk, updatedAtMs)) return false;
    }
    return true;
  }

  private prepare(campaign: CampaignToProcess): { recipients: RecipientToWrite[]; ready: ReadyCampaign } {
    const requested = parseStoredRecipients(campaign.request_recipients);
    const senderType = this.campaigns.senderType(campaign.client_id, campaign.sender);
    const plan = planRecipients(requested, {
      senderPermittedForIreland: isPermittedForIreland(senderType),
      suppressed: this.optouts.suppressedNumbers(campaign.client_id),
    });
    const analysis = analyzeText(campaign.text);
    const nowMs = this.now();
    return {
      recipients: plan.accepted,
      ready: {
        campaignId: campaign.id,
        totalSent: plan.accepted.length,
        textSent: analysis.text,
        encoding: analysis.encoding,
        partsPerMessage: analysis.parts,
        sendAtMs: sendAtInstantMs(campaign.send_at_local, nowMs),
        skippedCount: requested.length - plan.accepted.length,
        readyAtMs: nowMs,
      },
    };
  }
}

/**
 * SPEC.md Scheduling: sendAt is Europe/Dublin wall time, seconds dropped; omitted means now.
 * Past times are kept as given: the engine sends anything whose send_at has passed at once.
 */
export function sendAtInstantMs(sendAtLocal: string | null, nowMs: number): number {
  if (sendAtLocal === null) return nowMs;
  const parsed = parseSendAt(sendAtLocal);
  if (!parsed.ok) throw new Error(`stored sendAt '${sendAtLocal}' ${parsed.reason}`);
  return dublinLocalToUtcMs(parsed.local);
}

function parseStoredRecipients(json: string | null): RecipientRequest[] {
  if (json === null) throw new Error('campaign has no stored recipients');
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed)) throw new Error('stored recipients are not an array');
  return parsed as RecipientRequest[];
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function isTransient(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && [...TRANSIENT_SQLITE_CODES].some((c) => code.startsWith(c));
}

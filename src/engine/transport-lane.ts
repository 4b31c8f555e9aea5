/**
 * One transport's lane: claims due parts from the store in batches ('queued' -> 'submitting',
 * written before transport.submit), groups them per recipient into one OutboundMessage, and runs
 * the submits through a p-queue whose rate is the transport's maxPerSecond (counted per message
 * here; transports pace their parts themselves, e.g. the SMPP token bucket, so a multi-part
 * message never exceeds the carrier's rate). The in-flight window counts parts (PartWindow: a
 * 3-part message holds three of the transport's windowSize slots) and a part holds its slot from
 * the submit until its outcome is committed: the parts a crash can leave 'submitting' (and so
 * send twice) are then at most the window. The window follows transport.windowSize, read again at
 * every claim, submit and release: a cluster node's SMPP window is `window` x the bind slots it
 * holds now (0 while it holds none), so what a node can send and leave unrecorded, and a takeover
 * send again, stays within the slots it holds; parts that find it at 0 go back unsent.
 * Backpressure: it claims more only when fewer than lowWaterMessages wait in the queue, so memory
 * stays bounded however large the campaign. While the transport is not bound it claims nothing:
 * its parts stay queued and spend no attempts.
 * Claims are fair across campaigns (FairClaimer), and what waits in the queue is kept to about
 * CLAIM_AHEAD_MS of sending at the transport's rate, so a campaign that appears behind a large one
 * is claimed, and sent, within about a second even on a slow transport.
 */
import PQueue from 'p-queue';
import { BackgroundWorker, type PassResult } from '../common/background-worker.js';
import type { Clock } from '../common/clock.js';
import type { GatewayObserver } from '../gateway-observer.js';
import type { Logger } from '../common/log.js';
import type { ClaimablePart } from '../store/sqlite/dispatch-store.js';
import type { OutboundMessage, OutboundSender, PartOutcome, Transport } from '../transports/transport.js';
import type { CampaignPlan, CampaignPlans } from './campaign-plans.js';
import type { EngineConfig } from './config.js';
import { FailureLog } from '../common/failure-log.js';
import type { EngineBackend, LaneClaimer } from './engine-backend.js';
import { PartWindow } from './part-window.js';

export interface LaneDeps {
  transport: Transport;
  /** Claims, campaign texts and outcome writes (SQLite or PostgreSQL: engine-backend.ts). */
  backend: EngineBackend;
  plans: CampaignPlans;
  config: EngineConfig;
  logger: Logger;
  now: () => number;
  observer: GatewayObserver;
  /** The poll sleeps run on this clock (default: the system clock). */
  clock?: Clock;
  /**
   * Told, once their outcomes are written, the parts sent back to the queue: after a temporary
   * failure (`afterFailure`: their route may retry them on its next transport) or unsent (the
   * transport went down under them: their route may have moved on meanwhile).
   */
  onRequeued?: (partIds: number[], afterFailure: boolean) => void;
}

/**
 * Claimed messages waiting in the queue are kept to about this much sending time at the
 * transport's rate: a claim of 500 at 100 messages/s used to put 5 s of one
 * campaign ahead of anything posted after it.
 */
export const CLAIM_AHEAD_MS = 500;


/**
 * How much one claim asks for (its limit counts parts: messages of one part, the common case) and
 * the queue length under which the lane claims again. Fast or unpaced transports keep the sizes
 * they always had (engine.batchSize per claim, again under max(window, 64)).
 */
export function claimSizesFor(maxPerSecond: number, windowSize: number, batchSize: number): { claimMessages: number; lowWaterMessages: number } {
  const aheadMessages = Number.isFinite(maxPerSecond) && maxPerSecond > 0 ? Math.ceil((maxPerSecond * CLAIM_AHEAD_MS) / 1_000) : batchSize;
  const claimMessages = Math.max(1, Math.min(batchSize, Math.max(windowSize, aheadMessages)));
  return { claimMessages, lowWaterMessages: Math.max(windowSize, Math.min(64, claimMessages)) };
}

/** p-queue rate settings for a parts-per-second limit: 10 windows a second smooth out bursts. */
export function rateLimitFor(maxPerSecond: number): { intervalCap: number; interval: number } | undefined {
  if (!Number.isFinite(maxPerSecond) || maxPerSecond <= 0) return undefined;
  if (maxPerSecond < 1) return { intervalCap: 1, interval: Math.round(1_000 / maxPerSecond) };
  if (maxPerSecond < 10) return { intervalCap: Math.floor(maxPerSecond), interval: 1_000 };
  return { intervalCap: Math.ceil(maxPerSecond / 10), interval: 100 };
}

export class TransportLane {
  private readonly queue: PQueue;
  private readonly window: PartWindow;
  private readonly feeder: BackgroundWorker;
  private readonly claimFailures: FailureLog;
  /** A transport whose submit keeps rejecting, or outcomes that keep failing to write: summarised, not a line per message. */
  private readonly submitFailures: FailureLog;
  private readonly outcomeWriteFailures: FailureLog;
  private readonly claimer: LaneClaimer;
  private started = false;
  /** Set by drain(): claimed parts not yet on their way go back to the queue unsent. */
  private draining = false;
  /** Submits handed to the transport since start. */
  submits = 0;

  constructor(private readonly deps: LaneDeps) {
    const { transport } = deps;
    const rate = rateLimitFor(transport.maxPerSecond);
    // Sized for real by syncWindow (a cluster node's SMPP transport holds no slot before it starts).
    this.window = new PartWindow(1);
    const concurrency = 1;
    this.queue = new PQueue(rate === undefined ? { concurrency } : { concurrency, ...rate });
    this.syncWindow();
    this.claimFailures = new FailureLog(deps.logger, 'claiming parts');
    this.submitFailures = new FailureLog(deps.logger, 'transport.submit (rejected: treated as lost responses)');
    this.outcomeWriteFailures = new FailureLog(deps.logger, 'writing submit outcomes (the parts stay submitting until requeued)');
    this.claimer = deps.backend.claimerFor(transport.name);
    this.feeder = new BackgroundWorker({
      intervalMs: deps.config.pollIntervalMs,
      pass: () => this.feedPass(),
      onError: (err) => this.claimFailures.failed(err, { transport: transport.name }),
      ...(deps.clock === undefined ? {} : { clock: deps.clock }),
    });
  }

  get name(): string {
    return this.deps.transport.name;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.feeder.start();
  }

  wake(): void {
    this.feeder.wake();
  }

  /** Stops claiming and forgets claimed submits that have not started (their parts stay 'submitting' for the engine to requeue). */
  async stopFeeding(): Promise<void> {
    const stopping = this.feeder.stop();
    this.queue.clear();
    await stopping;
    // Anything added between the clear and the loop noticing the stop.
    this.queue.clear();
  }

  /**
   * A reload retires this lane (its transport was removed or rebinds with new settings): no more
   * claims; claimed messages still waiting in the queue are written back 'not-sent'
   * (TRANSPORT_STOPPED: queued again, no attempt spent) instead of sent; submits already started
   * finish and their outcomes are written. True when that was all done within timeoutMs.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.draining = true;
    await this.feeder.stop();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([this.queue.onIdle().then(() => true as const), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Resolves when every started submit has finished and its outcome is written. */
  onIdle(): Promise<void> {
    return this.queue.onIdle();
  }

  /** One claim pass: 'idle' sleeps the poll interval (or until wake()), 'more' claims again soon. */
  private async feedPass(): Promise<PassResult> {
    const { transport, backend } = this.deps;
    // The store refuses writes (disk full, database failover): outcomes in flight are being retried and
    // hold their window slots; claiming more would only add parts whose outcomes cannot be written either.
    // A cluster node that may have lost its lease claims nothing: its claims would be void.
    // A window of 0 (a cluster node holding none of the transport's bind slots) sends nothing.
    const windowSize = this.syncWindow();
    if (transport.currentState().state !== 'bound' || backend.stalled || !backend.leaseHeld || windowSize === 0) return 'idle';
    const { claimMessages, lowWaterMessages } = claimSizesFor(transport.maxPerSecond, windowSize, this.deps.config.batchSize);
    if (this.queue.size >= lowWaterMessages) {
      // Not raced with a timer: each abandoned onSizeLessThan would leave a listener behind.
      // stopFeeding() clears the queue, which resolves this wait.
      await this.queue.onSizeLessThan(lowWaterMessages);
      return 'more';
    }
    // A claim that throws goes to onError (claimFailures) and the worker sleeps the poll interval.
    const claimedAs = backend.claimantId();
    const messages = await this.claimer.claim(this.deps.now(), claimMessages, claimedAs);
    this.claimFailures.recovered();
    if (messages.length === 0) return 'idle';
    const plans = await this.plansFor(messages);
    for (const parts of messages) void this.queue.add(() => this.send(parts, claimedAs, plans));
    // 'more': the worker lets submits start and outcomes commit (one event-loop turn) between claims.
    return 'more';
  }

  /** `claimedAs`: the node id the parts were claimed under (backend.claimantId(); null for a single gateway). */
  private async send(parts: ClaimablePart[], claimedAs: string | null, plans: ReadonlyMap<string, CampaignPlan>): Promise<void> {
    const first = parts[0];
    if (first === undefined) return;
    if (this.draining) {
      await this.writeOutcomes(parts, claimedAs, parts.map((p) => ({ part: p.part_number, kind: 'not-sent', reason: 'TRANSPORT_STOPPED' })));
      return;
    }
    const plan = plans.get(first.campaign_id) ?? this.deps.plans.cached(first.campaign_id) ?? (await this.loadPlan(first.campaign_id));
    const sender = plan?.sender;
    if (plan === undefined || sender === undefined || plan.refusal !== undefined) {
      // A customer's cut that cannot go as they cut it (customer-cut-plan.ts) is never sent re-cut.
      const status = plan === undefined ? 'CAMPAIGN_MISSING' : plan.refusal?.status ?? 'INVALID_SENDER';
      if (plan?.refusal !== undefined) this.deps.logger.warn({ campaignId: first.campaign_id, status, detail: plan.refusal.detail }, 'customer part cannot go as cut');
      await this.writeOutcomes(parts, claimedAs, parts.map((p) => ({ part: p.part_number, kind: 'permanent', status })));
      return;
    }
    // Claimed before this node froze past its lease (NodeIdSource.leaseHeld), or under the id it
    // had before it was fenced and rejoined: a peer has requeued and sent these parts by now, so
    // the carrier must not get them again. Not sent; the write is fenced (refused) if the claim
    // was taken over, else the part is simply queued again. Asked here and, after any wait inside
    // the transport, just before the wire (mayStillSend). A single gateway's claims are never void.
    const { backend } = this.deps;
    const stillOurs = claimedAs === null ? undefined : (): boolean => backend.leaseHeld && backend.claimantId() === claimedAs;
    const message = this.messageFor(parts, first, plan, sender, stillOurs);
    this.syncWindow();
    if (!this.window.tryAcquire(parts.length) && !(await this.window.acquire(parts.length))) {
      // The window closed (the node gave up, or lost, every bind slot of the transport) before
      // these parts went out: back to the queue unsent, no attempt spent, for a node holding slots.
      await this.writeOutcomes(parts, claimedAs, parts.map((p) => ({ part: p.part_number, kind: 'not-sent', reason: 'TRANSPORT_DOWN' })));
      return;
    }
    try {
      if (stillOurs !== undefined && !stillOurs()) {
        await this.writeOutcomes(parts, claimedAs, parts.map((p) => ({ part: p.part_number, kind: 'not-sent', reason: 'LEASE_LAPSED' })));
        return;
      }
      await this.writeOutcomes(parts, claimedAs, await this.submit(message, parts));
    } finally {
      // Resized first: a window that shrank meanwhile admits only what fits the new size.
      this.syncWindow();
      this.window.release(parts.length);
    }
  }

  /**
   * Brings the part window and the queue's concurrency to transport.windowSize now; returns it.
   * Parts in flight keep their slots when it shrinks (they are on the wire already).
   */
  private syncWindow(): number {
    const size = Math.max(0, Math.floor(this.deps.transport.windowSize));
    this.window.resize(size);
    // At most windowSize messages of one part each; PartWindow is the limit for longer ones.
    const concurrency = Math.max(1, size);
    if (this.queue.concurrency !== concurrency) this.queue.concurrency = concurrency;
    return size;
  }

  private async submit(message: OutboundMessage, parts: readonly ClaimablePart[]): Promise<readonly PartOutcome[]> {
    const { transport, observer } = this.deps;
    this.submits++;
    try {
      observer.partsSubmitted(transport.name, parts.length);
      const outcomes = await transport.submit(message);
      for (const outcome of outcomes) observer.partOutcome(transport.name, outcome);
      this.submitFailures.recovered({ transport: transport.name });
      return outcomes;
    } catch (err) {
      // Contract: submit never rejects for a per-part problem. Treat it as a lost response.
      this.submitFailures.failed(err, { transport: transport.name, messageKey: message.messageKey });
      const lost: PartOutcome[] = parts.map((p) => ({ part: p.part_number, kind: 'temporary', status: 'SUBMIT_ERROR' }));
      for (const outcome of lost) observer.partOutcome(transport.name, outcome);
      return lost;
    }
  }

  private async writeOutcomes(parts: readonly ClaimablePart[], claimedBy: string | null, results: readonly PartOutcome[]): Promise<void> {
    const { transport, backend } = this.deps;
    try {
      await backend.writeOutcomes({ transport: transport.name, parts, outcomes: results, claimedBy });
      this.outcomeWriteFailures.recovered({ transport: transport.name });
      for (const kind of ['temporary', 'not-sent'] as const) {
        const requeued = parts.filter((p) => results.find((o) => o.part === p.part_number)?.kind === kind).map((p) => p.id);
        if (requeued.length > 0) this.deps.onRequeued?.(requeued, kind === 'temporary');
      }
    } catch (err) {
      // Only a write no retry can cure (or one still queued at stop) gets here: a store refusing
      // for a passing reason is retried by the WriteBatcher and this waits, holding the window
      // slots. The parts stay 'submitting'; the next start (or this stop) requeues them.
      this.outcomeWriteFailures.failed(err, { transport: transport.name });
    }
  }

  /**
   * The plans of a claim's campaigns: cached ones as they are, the others from one read of their
   * texts (a claim of many one-part campaigns, such as SMPP submits, is one statement, not one a
   * message). Held by the claim's messages themselves, so a claim of more campaigns than the cache
   * holds never plans one twice. A campaign missing here (gone, or the read failed) is read again
   * by send() alone (loadPlan).
   */
  private async plansFor(messages: readonly ClaimablePart[][]): Promise<Map<string, CampaignPlan>> {
    const plans = new Map<string, CampaignPlan>();
    const missing = new Set<string>();
    for (const parts of messages) {
      const campaignId = parts[0]?.campaign_id;
      if (campaignId === undefined || plans.has(campaignId) || missing.has(campaignId)) continue;
      const cached = this.deps.plans.cached(campaignId);
      if (cached !== undefined) plans.set(campaignId, cached);
      else missing.add(campaignId);
    }
    if (missing.size === 0) return plans;
    try {
      for (const campaign of await this.deps.backend.campaignTexts([...missing])) plans.set(campaign.id, this.deps.plans.planFor(campaign));
    } catch (err) {
      // The claimed parts are ours now: each message reads its own campaign in send() instead.
      this.deps.logger.warn({ err, transport: this.deps.transport.name, campaigns: missing.size }, 'could not read a claim\'s campaigns at once: read one by one');
    }
    return plans;
  }

  /** A plan not read with its claim: the campaign's texts from the store (undefined when the campaign is gone). */
  private async loadPlan(campaignId: string): Promise<CampaignPlan | undefined> {
    const [campaign] = await this.deps.backend.campaignTexts([campaignId]);
    return campaign === undefined ? undefined : this.deps.plans.planFor(campaign);
  }

  private messageFor(
    parts: readonly ClaimablePart[], first: ClaimablePart, plan: CampaignPlan, sender: OutboundSender, mayStillSend: (() => boolean) | undefined,
  ): OutboundMessage {
    const everyPart = parts.length === first.parts_total;
    return {
      ...(mayStillSend === undefined ? {} : { mayStillSend }),
      messageKey: `${first.campaign_id}/${first.recipient_id}`,
      destination: first.msisdn,
      sender,
      encoding: plan.encoding,
      segments: plan.segments,
      concatReference: first.concat_reference,
      ...(everyPart ? {} : { partNumbers: parts.map((p) => p.part_number) }),
      ...(plan.customerCut === undefined ? {} : { customerCut: plan.customerCut }),
    };
  }
}

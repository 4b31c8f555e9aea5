/**
 * submit_sm, query_sm and cancel_sm of bound customers into the engine (the SubmitIntake of
 * src/smpp-server/contracts.ts). A submit is decoded (intake/decode-submit.ts), planned against
 * its client's facts (intake/plan-submit.ts), then queued for a durable group commit: the submits
 * a loop turn gathered (up to maxBatch) are written in one transaction (SmppIntakeStore
 * insertSubmits: campaign, recipient, parts, reservation), and each is answered only once that
 * transaction committed. So submit_sm_resp, sent on the answer, never names a message that a
 * crash could lose, and a store failure answers the whole batch ESME_RSYSERR with nothing written.
 *
 * The client's send rate is applied here on this node (ESME_RTHROTTLED over it), against this
 * node's own limiter state: the claim that sends the parts still enforces the rate cluster-wide
 * (client_send_rates, src/engine/steps/claim.ts), so a customer spreading binds over nodes is
 * paced there, only not refused.
 */
import type { PricingRule } from '../accounts/credits.js';
import type { Logger } from '../common/log.js';
import { timeOrderedUuid } from '../common/time-ordered-id.js';
import type { Routing } from '../engine/steps/materialise.js';
import type { NumberingPlan } from '../sms/index.js';
import type { IntakeFacts, IntakeStored, IntakeSubmit, SmppIntakeStore } from '../store/smpp-intake-port.js';
import { SERVER_STATUS, sendsSubmits, type QueryOutcome, type ServerHandlers, type ServerSessionInfo, type ServerStatus, type SubmitOutcome, type SubmitSmFields } from './contracts.js';
import { decodeSubmit } from './intake/decode-submit.js';
import { queryOutcomeOf } from './intake/message-state.js';
import { intakeDestination, intakeSender, planSubmit } from './intake/plan-submit.js';

/** Submits written in one transaction at most: a window of 100 on a few binds fits in one or two. */
export const DEFAULT_INTAKE_BATCH = 500;

/** RFC 9562 textual form, any case: the message ids smsgate gives (campaign ids, issued lowercase). */
const MESSAGE_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface SubmitIntakeConfig {
  /** The engine's routes and its transports' conditions now (DispatchEngine.currentRouting). */
  routing: () => Routing;
  /** Config `pricing`. */
  pricing: readonly PricingRule[];
  /** Config numbering.country's plan. */
  numbering: NumberingPlan;
  /** Most submits per transaction; default DEFAULT_INTAKE_BATCH. */
  maxBatch?: number;
}

export interface SubmitIntakeDeps {
  store: SmppIntakeStore;
  config: SubmitIntakeConfig;
  now: () => number;
  logger: Logger;
  /** Wakes the engine's lane of a transport that has new queued parts (DispatchEngine.wakeTransport). */
  wake: (transport: string) => void;
  /**
   * Message ids (default timeOrderedUuid: ascending, so a batch's campaign, recipient and part rows
   * land together at the right edge of their indexes instead of on a random page each).
   */
  newId?: () => string;
}

interface QueuedSubmit {
  submit: IntakeSubmit;
  resolve: (outcome: SubmitOutcome) => void;
}

export class SubmitIntake implements Pick<ServerHandlers, 'submit' | 'query' | 'cancel'> {
  private readonly logger: Logger;
  private readonly newId: () => string;
  private readonly maxBatch: number;
  /** Submits waiting for the next commit, in arrival order. */
  private queue: QueuedSubmit[] = [];
  /** The commit loop while it runs: one transaction at a time, the next gathering meanwhile. */
  private flushing: Promise<void> | undefined;
  /** This node's limiter state (TAT, µs) per rated client. */
  private readonly rates = new Map<number, number>();
  private spreadKey = 0;

  constructor(private readonly deps: SubmitIntakeDeps) {
    this.logger = deps.logger.child({ component: 'smpp-intake' });
    this.newId = deps.newId ?? (() => timeOrderedUuid());
    this.maxBatch = Math.max(1, deps.config.maxBatch ?? DEFAULT_INTAKE_BATCH);
  }

  async submit(session: ServerSessionInfo, fields: SubmitSmFields): Promise<SubmitOutcome> {
    // SMPP 3.4 §2.2: a receiver bind submits nothing (the protocol layer answers so before asking).
    if (!sendsSubmits(session.bindType)) return refused(SERVER_STATUS.invalidBindStatus);
    const decoded = decodeSubmit(fields);
    if (decoded.kind === 'refused') return decoded;
    const { account } = session;
    const { config } = this.deps;
    const destination = intakeDestination(fields, config.numbering);
    const sender = intakeSender(fields);
    let facts: IntakeFacts | undefined;
    if (destination.ok && sender !== undefined) {
      try {
        facts = await this.deps.store.readFacts({ clientId: account.clientId, sender, msisdn: destination.msisdn });
      } catch (err) {
        this.logger.error({ err, systemId: account.systemId }, 'could not read the facts of a submit_sm: answered ESME_RSYSERR');
        return refused(SERVER_STATUS.systemError);
      }
    }
    // From here to the queue nothing awaits: this node's limiter state is read and advanced as one step.
    const nowMs = this.deps.now();
    const plan = planSubmit({
      account, fields, text: decoded.text, cut: decoded.cut, destination, sender, facts, routing: config.routing(), numbering: config.numbering,
      pricing: config.pricing, nextPartAtUs: this.rates.get(account.clientId) ?? 0, messageId: this.newId(), spreadKey: this.spreadKey++, nowMs,
    });
    if (plan.kind === 'refused') return plan;
    if (plan.nextPartAtUs !== null) this.rates.set(account.clientId, plan.nextPartAtUs);
    return new Promise<SubmitOutcome>((resolve) => {
      this.queue.push({ submit: plan.submit, resolve });
      this.flushing ??= this.flushLoop();
    });
  }

  async query(session: ServerSessionInfo, messageId: string, _sourceAddr: string): Promise<QueryOutcome> {
    if (!MESSAGE_ID_PATTERN.test(messageId)) return refused(SERVER_STATUS.queryFailed);
    try {
      const message = await this.deps.store.messageState(session.account.id, messageId.toLowerCase());
      // Another account's message is as unknown as one that never was.
      return message === undefined ? refused(SERVER_STATUS.queryFailed) : queryOutcomeOf(message);
    } catch (err) {
      this.logger.error({ err, systemId: session.account.systemId }, 'could not read a message for query_sm: answered ESME_RSYSERR');
      return refused(SERVER_STATUS.systemError);
    }
  }

  async cancel(session: ServerSessionInfo, messageId: string, _sourceAddr: string, _destinationAddr: string): Promise<{ status: ServerStatus }> {
    if (!MESSAGE_ID_PATTERN.test(messageId)) return { status: SERVER_STATUS.cancelFailed };
    try {
      const result = await this.deps.store.cancel(session.account.id, messageId.toLowerCase(), this.deps.now());
      if (result === 'cancelled') this.logger.info({ systemId: session.account.systemId, messageId }, 'message cancelled by cancel_sm');
      return { status: result === 'cancelled' ? SERVER_STATUS.ok : SERVER_STATUS.cancelFailed };
    } catch (err) {
      this.logger.error({ err, systemId: session.account.systemId, messageId }, 'could not cancel a message: answered ESME_RSYSERR');
      return { status: SERVER_STATUS.systemError };
    }
  }

  /** Resolves once every submit queued so far is answered (a stop waits for it before closing the store). */
  async drain(): Promise<void> {
    while (this.flushing !== undefined) await this.flushing;
  }

  /** Submits waiting for their commit now. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Commits the queue a batch at a time. The first batch starts a turn after the first submit,
   * so the submits of that turn (a window's worth arriving in one read) share its transaction;
   * while a batch commits the next one gathers.
   */
  private async flushLoop(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.slice(0, this.maxBatch);
        this.queue = this.queue.slice(batch.length);
        await this.commit(batch);
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private async commit(batch: readonly QueuedSubmit[]): Promise<void> {
    let stored: IntakeStored[];
    try {
      stored = await this.deps.store.insertSubmits(batch.map((q) => q.submit), this.deps.now());
    } catch (err) {
      this.logger.error({ err, submits: batch.length }, 'a batch of submit_sm could not be stored: answered ESME_RSYSERR, nothing accepted');
      for (const queued of batch) queued.resolve(refused(SERVER_STATUS.systemError));
      return;
    }
    const transports = new Set<string>();
    batch.forEach((queued, i) => {
      const result = stored[i];
      if (result?.kind === 'stored') {
        transports.add(queued.submit.transport);
        queued.resolve({ kind: 'accepted', messageId: queued.submit.messageId });
      } else {
        // Too few credits available (ESME_RSUBMITFAIL, as no route: the customer cannot fix it by retrying now).
        queued.resolve(refused(SERVER_STATUS.submitFailed));
      }
    });
    for (const transport of transports) {
      try {
        this.deps.wake(transport);
      } catch (err) {
        // The parts are stored and queued: the lane's poll finds them anyway.
        this.logger.warn({ err, transport }, 'could not wake the lane of stored submits; its next poll claims them');
      }
    }
    this.logger.debug({ submits: batch.length, stored: stored.filter((s) => s.kind === 'stored').length }, 'submit_sm batch committed');
  }
}


function refused(status: ServerStatus): { kind: 'refused'; status: ServerStatus } {
  return { kind: 'refused', status };
}

/**
 * The window of one SMPP session (one bound connection): every request sent on it and not yet
 * answered, with its deadline, and the submit slots (SMPP 3.4 §2.7: at most `slots` submit_sm
 * awaiting submit_sm_resp). Modelled on cloudhopper-smpp's Window: the one place that knows what
 * is outstanding, so that
 *
 * - a slot is taken before the submit is encoded and rate-limited (reserve), then moves to the
 *   request when it is sent (add), and is freed by its response, its deadline or the close;
 * - each request gets `responseTimeoutMs`; a sweep fails the overdue ones with RESPONSE_TIMEOUT;
 * - closing fails every pending request at once with a coded GatewayError (CONNECTION_LOST or
 *   TRANSPORT_STOPPED), and anything added later fails at once: nothing waits forever.
 *
 * Requests other than submit_sm (bind, enquire_link, unbind) have deadlines here too but hold no
 * slot: a full window of submits must not stop the link from being checked or closed.
 */
import type { PDU } from 'smpp';
import { GatewayError } from '../../common/errors.js';

/** Why a request got no response. */
export type RequestFailureCode = 'RESPONSE_TIMEOUT' | 'CONNECTION_LOST' | 'TRANSPORT_STOPPED';

export type RequestResult =
  | { kind: 'response'; pdu: PDU }
  /** `error.code` is `code`; retryable, since nothing says the SMSC refused the request. */
  | { kind: 'failed'; code: RequestFailureCode; error: GatewayError };

export type ResultCallback = (result: RequestResult) => void;

interface PendingRequest {
  deadlineMs: number;
  holdsSlot: boolean;
  onResult: ResultCallback;
}

const FAILURE_TEXT: Readonly<Record<RequestFailureCode, string>> = {
  RESPONSE_TIMEOUT: 'no response within the response timeout',
  CONNECTION_LOST: 'the SMPP connection closed before the response',
  TRANSPORT_STOPPED: 'the transport stopped before the response',
};

export function requestFailure(code: RequestFailureCode): RequestResult {
  return { kind: 'failed', code, error: new GatewayError(code, FAILURE_TEXT[code], { retryable: true }) };
}

export interface SessionWindowOptions {
  /** Submit slots: submit_sm sent or about to be sent and not yet answered. */
  slots: number;
  responseTimeoutMs: number;
  /** A slot was freed (response, deadline, close or a reservation given back). */
  onSlotFreed(): void;
  now?: () => number;
}

export class SessionWindow {
  private readonly pending = new Map<number, PendingRequest>();
  private reservedSlots = 0;
  private sentSlots = 0;
  private closedWith: RequestFailureCode | null = null;
  private readonly sweepTimer: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(private readonly options: SessionWindowOptions) {
    this.now = options.now ?? Date.now;
    // A quarter of the timeout keeps a late failure within 25 % of it, capped so a long timeout still sweeps every second.
    const sweepMs = Math.max(5, Math.min(1_000, Math.floor(options.responseTimeoutMs / 4)));
    this.sweepTimer = setInterval(() => this.expireOverdue(this.now()), sweepMs);
    this.sweepTimer.unref();
  }

  /** Slots in use: reserved for a submit about to be sent, or awaiting its response. */
  get slotsUsed(): number {
    return this.reservedSlots + this.sentSlots;
  }

  get hasFreeSlot(): boolean {
    return this.closedWith === null && this.slotsUsed < this.options.slots;
  }

  /** Requests of every command sent and not yet answered. */
  get pendingCount(): number {
    return this.pending.size;
  }

  get isClosed(): boolean {
    return this.closedWith !== null;
  }

  /** Takes a slot if one is free; the caller then add()s a request holding it, or unreserve()s. */
  reserve(): boolean {
    if (!this.hasFreeSlot) return false;
    this.reservedSlots++;
    return true;
  }

  /** Gives back a reserved slot that will not be sent. */
  unreserve(): void {
    if (this.reservedSlots === 0) return;
    this.reservedSlots--;
    this.options.onSlotFreed();
  }

  /**
   * Records a request just written with this sequence number; onResult is called exactly once.
   * holdsSlot moves a reserved slot to it. On a closed window it fails at once.
   */
  add(sequenceNumber: number, onResult: ResultCallback, holdsSlot: boolean): void {
    if (holdsSlot && this.reservedSlots > 0) {
      this.reservedSlots--;
      this.sentSlots++;
    } else {
      holdsSlot = false;
    }
    if (this.closedWith !== null) {
      if (holdsSlot) this.freeSentSlot();
      onResult(requestFailure(this.closedWith));
      return;
    }
    this.pending.set(sequenceNumber, { deadlineMs: this.now() + this.options.responseTimeoutMs, holdsSlot, onResult });
  }

  /** A response arrived: completes its request. False if nothing was waiting for it (late or unknown). */
  complete(response: PDU): boolean {
    const request = this.pending.get(response.sequence_number);
    if (request === undefined) return false;
    this.pending.delete(response.sequence_number);
    if (request.holdsSlot) this.freeSentSlot();
    request.onResult({ kind: 'response', pdu: response });
    return true;
  }

  /** Fails every request whose deadline has passed with RESPONSE_TIMEOUT. */
  expireOverdue(nowMs: number): void {
    // Every request has the same timeout, so insertion order is deadline order.
    for (const [sequenceNumber, request] of this.pending) {
      if (request.deadlineMs > nowMs) break;
      this.pending.delete(sequenceNumber);
      if (request.holdsSlot) this.freeSentSlot();
      request.onResult(requestFailure('RESPONSE_TIMEOUT'));
    }
  }

  /** The session closed: every pending request fails with code, and so does anything added later. */
  failAll(code: Exclude<RequestFailureCode, 'RESPONSE_TIMEOUT'>): void {
    if (this.closedWith !== null) return;
    this.closedWith = code;
    clearInterval(this.sweepTimer);
    const requests = [...this.pending.values()];
    this.pending.clear();
    const freed = requests.some((request) => request.holdsSlot) || this.reservedSlots > 0;
    this.sentSlots = 0;
    for (const request of requests) request.onResult(requestFailure(code));
    if (freed) this.options.onSlotFreed();
  }

  private freeSentSlot(): void {
    this.sentSlots--;
    this.options.onSlotFreed();
  }
}

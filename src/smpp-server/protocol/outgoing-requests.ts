/**
 * The requests the server sends one customer (deliver_sm, enquire_link, unbind): numbered, written,
 * and tracked in a SessionWindow (session-window.ts) until their response, their deadline
 * (responseTimeoutMs) or the end of the connection, so nothing waits forever.
 *
 * deliver_sm hold the window's windowSize slots (SMPP 3.4 §2.7). One asked for while every slot is
 * taken waits here, in order, for a slot or for responseTimeoutMs (then lost: timeout); the
 * delivery sender is expected to look at freeSlots first, so this is a short queue, not a store.
 * enquire_link and unbind hold no slot: a full window must not stop the link from being checked
 * or closed.
 */
import smpp from 'smpp';
import type { PDU } from 'smpp';
import type { Logger } from '../../common/log.js';
import { COMMAND_STATUS_CODE } from '../../transports/smpp/command-status.js';
import { SessionWindow, type RequestResult, type ResultCallback } from '../../transports/smpp/session-window.js';
import type { DeliverResult, DeliverSmFields } from '../contracts.js';
import { deliverSmParams } from './server-pdus.js';

/** SMPP 3.4 §5.1.4: sequence_number runs 0x00000001 to 0x7FFFFFFF; the server's own wrap back to 1. */
const MAX_SEQUENCE_NUMBER = 0x7fffffff;

export interface OutgoingRequestsOptions {
  windowSize: number;
  responseTimeoutMs: number;
  now: () => number;
  /** The connection's logger as it is now (it gains the account once bound). */
  log: () => Logger;
  /** Writes a whole PDU to the customer. */
  write(bytes: Buffer): void;
  /** May deliver_sm go out now (the session is bound and not unbinding)? */
  mayDeliver(): boolean;
}

interface WaitingDelivery {
  params: Record<string, unknown>;
  deadlineMs: number;
  resolve(result: DeliverResult): void;
}

export class OutgoingRequests {
  private readonly window: SessionWindow;
  private waiting: WaitingDelivery[] = [];
  private sequence = 0;

  constructor(private readonly options: OutgoingRequestsOptions) {
    this.window = new SessionWindow({ slots: options.windowSize, responseTimeoutMs: options.responseTimeoutMs, onSlotFreed: () => this.drainWaiting(), now: options.now });
  }

  /** Requests written and not yet answered. */
  get pendingCount(): number {
    return this.window.pendingCount;
  }

  /** deliver_sm slots free now (none while deliver_sm may not go out). */
  get freeSlots(): number {
    if (!this.options.mayDeliver()) return 0;
    return Math.max(0, this.options.windowSize - this.window.slotsUsed - this.waiting.length);
  }

  /** A response from the customer: completes its request. False if nothing waited for it (late or unknown). */
  complete(response: PDU): boolean {
    return this.window.complete(response);
  }

  /** enquire_link, unbind: no slot, a deadline. onResult is called exactly once. */
  request(command: 'enquire_link' | 'unbind', onResult: ResultCallback): void {
    this.send(command, {}, onResult, false);
  }

  deliver(fields: DeliverSmFields): Promise<DeliverResult> {
    return new Promise<DeliverResult>((resolve) => {
      if (!this.options.mayDeliver() || this.window.isClosed) {
        resolve({ kind: 'lost', reason: 'closed' });
        return;
      }
      const built = deliverSmParams(fields);
      if (built.kind === 'invalid') {
        // A stored row we cannot encode: ours to fix, said loudly; the sender tries it again later.
        this.options.log().error({ reason: built.reason }, 'deliver_sm cannot be encoded');
        resolve({ kind: 'refused', status: COMMAND_STATUS_CODE.ESME_RSYSERR });
        return;
      }
      if (this.waiting.length === 0 && this.window.reserve()) {
        this.sendDeliver(built.params, resolve);
        return;
      }
      this.waiting.push({ params: built.params, deadlineMs: this.options.now() + this.options.responseTimeoutMs, resolve });
    });
  }

  /** Deliveries that waited for a slot past their deadline are lost (timeout). */
  expireWaiting(nowMs: number): void {
    while (this.waiting.length > 0 && this.waiting[0]!.deadlineMs <= nowMs) this.waiting.shift()!.resolve({ kind: 'lost', reason: 'timeout' });
  }

  /** The connection ended: everything pending or waiting is lost (closed), and so is anything asked later. */
  failAll(): void {
    this.window.failAll('CONNECTION_LOST');
    const waiting = this.waiting;
    this.waiting = [];
    for (const delivery of waiting) delivery.resolve({ kind: 'lost', reason: 'closed' });
  }

  private sendDeliver(params: Record<string, unknown>, resolve: (result: DeliverResult) => void): void {
    this.send('deliver_sm', params, (result) => resolve(deliverResult(result)), true);
  }

  private drainWaiting(): void {
    while (this.waiting.length > 0 && this.options.mayDeliver() && this.window.reserve()) {
      const next = this.waiting.shift()!;
      this.sendDeliver(next.params, next.resolve);
    }
  }

  /** Writes a request with the next sequence_number and tracks it (holdsSlot: a reserved deliver_sm slot). */
  private send(command: string, params: Record<string, unknown>, onResult: ResultCallback, holdsSlot: boolean): void {
    const sequenceNumber = this.nextSequence();
    let bytes: Buffer;
    try {
      bytes = new smpp.PDU(command, { ...params, sequence_number: sequenceNumber }).toBuffer();
    } catch (err) {
      if (holdsSlot) this.window.unreserve();
      this.options.log().error({ err, command }, 'request cannot be encoded');
      onResult({ kind: 'response', pdu: new smpp.PDU('generic_nack', { sequence_number: sequenceNumber, command_status: COMMAND_STATUS_CODE.ESME_RSYSERR }) });
      return;
    }
    this.options.write(bytes);
    this.window.add(sequenceNumber, onResult, holdsSlot);
  }

  private nextSequence(): number {
    this.sequence = this.sequence >= MAX_SEQUENCE_NUMBER ? 1 : this.sequence + 1;
    return this.sequence;
  }
}

function deliverResult(result: RequestResult): DeliverResult {
  if (result.kind === 'failed') return { kind: 'lost', reason: result.code === 'RESPONSE_TIMEOUT' ? 'timeout' : 'closed' };
  const status = result.pdu.command_status;
  return status === COMMAND_STATUS_CODE.ESME_ROK ? { kind: 'acknowledged' } : { kind: 'refused', status };
}

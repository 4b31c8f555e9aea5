/**
 * One circuit breaker per client endpoint (client id + URL). SPEC "Events" point 7: the breaker opens
 * for 30 s after two transient failures; while open a retry fails fast with no request.
 *
 * closed: attempts run; `failuresToOpen` consecutive transient failures open it.
 * open: attempts fail fast until `openMs` have passed by the clock, then it is half-open.
 * half-open: one attempt (the trial) runs, the others fail fast while it is in flight; a transient
 * failure of the trial opens it again, any other answer closes it.
 * Only transient failures count: a 2xx or a permanent 4xx is the endpoint answering, which resets the
 * count.
 *
 * This was an opossum wrapper. opossum's own rule (a failure rate over a rolling window of every
 * call) was switched off because it is not "two transient failures", and its reset timer runs on
 * real time, which an injected clock cannot step (STYLE rule 1): what was left of it is the small
 * state machine here, whose window is read from the clock when asked, so there is no timer to stop.
 */
import type { AttemptVerdict } from './retry-policy.js';

export type BreakerVerdict = AttemptVerdict;
export type BreakerState = 'open' | 'half-open' | 'closed';

/** What the guarded attempt produced; `verdict` decides how the breaker counts it. */
export interface GuardedResult<T> {
  verdict: BreakerVerdict;
  value: T;
}

export type GuardedOutcome<T> = { kind: 'ran'; verdict: BreakerVerdict; value: T } | { kind: 'circuit-open' };

export interface EndpointBreakerOptions {
  /** Consecutive transient failures that open the breaker. */
  failuresToOpen: number;
  /** How long it stays open before a trial is let through. */
  openMs: number;
  /** Default Date.now. */
  now?: () => number;
  onStateChange?: (key: string, state: BreakerState) => void;
}

interface Endpoint {
  consecutiveFailures: number;
  /** When it opened (by the clock), or null while closed. */
  openedAtMs: number | null;
  trialInFlight: boolean;
}

export class EndpointBreakers {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly now: () => number;

  constructor(private readonly options: EndpointBreakerOptions) {
    if (!Number.isInteger(options.failuresToOpen) || options.failuresToOpen < 1) {
      throw new RangeError(`failuresToOpen must be an integer >= 1, got ${options.failuresToOpen}`);
    }
    this.now = options.now ?? Date.now;
  }

  static keyFor(clientId: number, url: string): string {
    return `${clientId} ${url}`;
  }

  /** Runs the attempt through the endpoint's breaker, or reports that the breaker is open. */
  async run<T>(key: string, attempt: () => Promise<GuardedResult<T>>): Promise<GuardedOutcome<T>> {
    const endpoint = this.endpoint(key);
    const state = this.stateOf(endpoint);
    if (state === 'open' || (state === 'half-open' && endpoint.trialInFlight)) return { kind: 'circuit-open' };
    const isTrial = state === 'half-open';
    if (isTrial) {
      endpoint.trialInFlight = true;
      this.options.onStateChange?.(key, 'half-open');
    }
    let result: GuardedResult<T>;
    try {
      result = await attempt();
    } finally {
      if (isTrial) endpoint.trialInFlight = false;
    }
    if (result.verdict === 'transient') this.onFailure(key, endpoint, isTrial);
    else this.onAnswer(key, endpoint, isTrial);
    return { kind: 'ran', verdict: result.verdict, value: result.value };
  }

  /** 'closed' for an endpoint never used. */
  state(key: string): BreakerState {
    const endpoint = this.endpoints.get(key);
    return endpoint === undefined ? 'closed' : this.stateOf(endpoint);
  }

  /** When an open breaker lets its trial through, by the clock; null when it is not open. */
  halfOpensAt(key: string): number | null {
    const endpoint = this.endpoints.get(key);
    if (endpoint === undefined || this.stateOf(endpoint) !== 'open') return null;
    return (endpoint.openedAtMs as number) + this.options.openMs;
  }

  /** Forgets every endpoint. */
  shutdown(): void {
    this.endpoints.clear();
  }

  private stateOf(endpoint: Endpoint): BreakerState {
    if (endpoint.openedAtMs === null) return 'closed';
    return this.now() - endpoint.openedAtMs >= this.options.openMs ? 'half-open' : 'open';
  }

  private onFailure(key: string, endpoint: Endpoint, wasTrial: boolean): void {
    if (wasTrial) {
      this.open(key, endpoint);
      return;
    }
    // Failures of attempts that were in flight when it opened do not re-open it or move its window.
    if (endpoint.openedAtMs !== null) return;
    endpoint.consecutiveFailures += 1;
    if (endpoint.consecutiveFailures >= this.options.failuresToOpen) this.open(key, endpoint);
  }

  /** An answer (2xx or permanent 4xx) closes it only as the trial's: a late answer of an attempt sent before it opened does not. */
  private onAnswer(key: string, endpoint: Endpoint, wasTrial: boolean): void {
    endpoint.consecutiveFailures = 0;
    if (!wasTrial || endpoint.openedAtMs === null) return;
    endpoint.openedAtMs = null;
    this.options.onStateChange?.(key, 'closed');
  }

  private open(key: string, endpoint: Endpoint): void {
    endpoint.openedAtMs = this.now();
    endpoint.consecutiveFailures = 0;
    this.options.onStateChange?.(key, 'open');
  }

  private endpoint(key: string): Endpoint {
    let endpoint = this.endpoints.get(key);
    if (endpoint === undefined) {
      endpoint = { consecutiveFailures: 0, openedAtMs: null, trialInFlight: false };
      this.endpoints.set(key, endpoint);
    }
    return endpoint;
  }
}

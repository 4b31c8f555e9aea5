/**
 * One opossum circuit breaker per client endpoint (client id + URL). SPEC "Events" point 7: the
 * breaker opens for 30 s after two transient failures; while open a retry fails fast with no request.
 *
 * opossum opens on a failure *rate* over a rolling window of every call (ARCHITECTURE.md), which is
 * not "two transient failures": after many successes two failures would not open it. So opossum's own
 * rate rule is switched off (errorThresholdPercentage 100 can never be exceeded) and this wrapper
 * counts consecutive transient failures, calling breaker.open() at the threshold. opossum keeps the
 * rest: fast rejection while open, the reset timer, and half-open (one probe; its failure re-opens,
 * its success closes). Only transient failures count: a 2xx or a permanent 4xx is the endpoint
 * answering, which resets the count (a permanent 4xx passes opossum's errorFilter as a success).
 */
import CircuitBreaker from 'opossum';
import type { AttemptVerdict } from './retry-policy.js';

export type BreakerVerdict = AttemptVerdict;

/** What the guarded attempt produced; `verdict` decides how the breaker counts it. */
export interface GuardedResult<T> {
  verdict: BreakerVerdict;
  value: T;
}

export type GuardedOutcome<T> = { kind: 'ran'; verdict: BreakerVerdict; value: T } | { kind: 'circuit-open' };

/** Carries a transient result through opossum as a rejection, so opossum sees a failure. */
class TransientFailure<T> extends Error {
  constructor(readonly result: GuardedResult<T>) {
    super('transient webhook failure');
  }
}

class PermanentFailure<T> extends Error {
  constructor(readonly result: GuardedResult<T>) {
    super('permanent webhook refusal');
  }
}

export interface EndpointBreakerOptions {
  /** Consecutive transient failures that open the breaker. */
  failuresToOpen: number;
  /** How long it stays open before a probe is let through. */
  openMs: number;
  onStateChange?: (key: string, state: 'open' | 'half-open' | 'closed') => void;
}

type Action<T> = () => Promise<GuardedResult<T>>;

interface Endpoint {
  breaker: CircuitBreaker<[Action<unknown>], GuardedResult<unknown>>;
  consecutiveFailures: number;
}

export class EndpointBreakers {
  private readonly endpoints = new Map<string, Endpoint>();

  constructor(private readonly options: EndpointBreakerOptions) {
    if (!Number.isInteger(options.failuresToOpen) || options.failuresToOpen < 1) {
      throw new RangeError(`failuresToOpen must be an integer >= 1, got ${options.failuresToOpen}`);
    }
  }

  static keyFor(clientId: number, url: string): string {
    return `${clientId} ${url}`;
  }

  /** Runs the attempt through the endpoint's breaker, or reports that the breaker is open. */
  async run<T>(key: string, attempt: () => Promise<GuardedResult<T>>): Promise<GuardedOutcome<T>> {
    const endpoint = this.endpoint(key);
    try {
      const result = (await endpoint.breaker.fire(attempt as Action<unknown>)) as GuardedResult<T>;
      return { kind: 'ran', verdict: result.verdict, value: result.value };
    } catch (err) {
      if (err instanceof TransientFailure || err instanceof PermanentFailure) {
        const result = err.result as GuardedResult<T>;
        return { kind: 'ran', verdict: result.verdict, value: result.value };
      }
      if (CircuitBreaker.isOurError(err as Error) && (err as { code?: string }).code === 'EOPENBREAKER') return { kind: 'circuit-open' };
      throw err;
    }
  }

  /** 'closed' for an endpoint never used. */
  state(key: string): 'open' | 'half-open' | 'closed' {
    const breaker = this.endpoints.get(key)?.breaker;
    if (breaker === undefined || breaker.closed) return 'closed';
    return breaker.opened ? 'open' : 'half-open';
  }

  /** Stops every breaker's timers. */
  shutdown(): void {
    for (const { breaker } of this.endpoints.values()) breaker.shutdown();
    this.endpoints.clear();
  }

  private endpoint(key: string): Endpoint {
    const existing = this.endpoints.get(key);
    if (existing !== undefined) return existing;
    const breaker = new CircuitBreaker<[Action<unknown>], GuardedResult<unknown>>(
      async (attempt: Action<unknown>) => {
        const result = await attempt();
        if (result.verdict === 'transient') throw new TransientFailure(result);
        if (result.verdict === 'permanent') throw new PermanentFailure(result);
        return result;
      },
      {
        name: key,
        // The attempt has its own deadline (the HTTP client's timeoutMs); opossum's would race it.
        timeout: false,
        resetTimeout: this.options.openMs,
        // Never opens by rate: this wrapper opens it on consecutive transient failures (see top).
        errorThresholdPercentage: 100,
        // A permanent refusal is an answer from a live endpoint: counted as a success, not a failure.
        errorFilter: (err: unknown) => err instanceof PermanentFailure,
        enableSnapshots: false,
        rollingPercentilesEnabled: false,
      },
    );
    const endpoint: Endpoint = { breaker, consecutiveFailures: 0 };
    breaker.on('failure', () => {
      endpoint.consecutiveFailures += 1;
      if (endpoint.consecutiveFailures >= this.options.failuresToOpen && breaker.closed) breaker.open();
    });
    breaker.on('success', () => {
      endpoint.consecutiveFailures = 0;
    });
    breaker.on('open', () => {
      endpoint.consecutiveFailures = 0;
      this.options.onStateChange?.(key, 'open');
    });
    breaker.on('halfOpen', () => this.options.onStateChange?.(key, 'half-open'));
    breaker.on('close', () => this.options.onStateChange?.(key, 'closed'));
    this.endpoints.set(key, endpoint);
    return endpoint;
  }
}

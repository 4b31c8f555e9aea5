import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { EndpointBreakers } from '../../src/webhooks/index.js';

type Verdict = 'delivered' | 'transient' | 'permanent';

describe('EndpointBreakers (SPEC Events point 7: open 30 s after two transient failures)', () => {
  const made: EndpointBreakers[] = [];
  const breakers = (openMs = 60_000, failuresToOpen = 2) => {
    const b = new EndpointBreakers({ failuresToOpen, openMs });
    made.push(b);
    return b;
  };
  afterEach(() => {
    for (const b of made.splice(0)) b.shutdown();
  });
  let calls = 0;
  const attempt = (verdict: Verdict) => async () => {
    calls += 1;
    return { verdict, value: verdict };
  };

  it('opens on the second consecutive transient failure, then fails fast without running the attempt', async () => {
    const b = breakers();
    calls = 0;
    expect(await b.run('1 u', attempt('transient'))).toEqual({ kind: 'ran', verdict: 'transient', value: 'transient' });
    expect(b.state('1 u')).toBe('closed');
    await b.run('1 u', attempt('transient'));
    expect(b.state('1 u')).toBe('open');
    expect(await b.run('1 u', attempt('delivered'))).toEqual({ kind: 'circuit-open' });
    expect(calls).toBe(2);
  });

  it('opens after two failures even after many successes (opossum rate rule alone would not)', async () => {
    const b = breakers();
    for (let i = 0; i < 20; i++) await b.run('1 u', attempt('delivered'));
    await b.run('1 u', attempt('transient'));
    expect(b.state('1 u')).toBe('closed');
    await b.run('1 u', attempt('transient'));
    expect(b.state('1 u')).toBe('open');
  });

  it('does not count permanent 4xx refusals as failures, and a success resets the count', async () => {
    const b = breakers();
    for (let i = 0; i < 5; i++) await b.run('1 u', attempt('permanent'));
    expect(b.state('1 u')).toBe('closed');
    await b.run('1 u', attempt('transient'));
    await b.run('1 u', attempt('delivered'));
    await b.run('1 u', attempt('transient'));
    expect(b.state('1 u')).toBe('closed');
    await b.run('1 u', attempt('transient'));
    expect(b.state('1 u')).toBe('open');
  });

  it('keeps endpoints apart: another client or URL has its own breaker', async () => {
    const b = breakers();
    await b.run(EndpointBreakers.keyFor(1, 'http://a/'), attempt('transient'));
    await b.run(EndpointBreakers.keyFor(1, 'http://a/'), attempt('transient'));
    expect(b.state(EndpointBreakers.keyFor(1, 'http://a/'))).toBe('open');
    expect(b.state(EndpointBreakers.keyFor(1, 'http://b/'))).toBe('closed');
    expect(await b.run(EndpointBreakers.keyFor(2, 'http://a/'), attempt('delivered'))).toMatchObject({ kind: 'ran' });
  });

  it('half-opens after its window: a failed probe re-opens it, a successful probe closes it', async () => {
    const b = breakers(60);
    await b.run('k', attempt('transient'));
    await b.run('k', attempt('transient'));
    expect(b.state('k')).toBe('open');
    await sleep(120);
    expect(b.state('k')).toBe('half-open');
    calls = 0;
    expect(await b.run('k', attempt('transient'))).toMatchObject({ kind: 'ran', verdict: 'transient' });
    expect(b.state('k')).toBe('open');
    await sleep(120);
    expect(await b.run('k', attempt('delivered'))).toMatchObject({ kind: 'ran', verdict: 'delivered' });
    expect(b.state('k')).toBe('closed');
    expect(calls).toBe(2);
  });
});

describe('EndpointBreakers on an injected clock', () => {
  it('stays open exactly openMs by the clock, lets one trial through half-open, and fails the others fast meanwhile', async () => {
    let nowMs = 1_000_000;
    const changes: string[] = [];
    const b = new EndpointBreakers({ failuresToOpen: 2, openMs: 30_000, now: () => nowMs, onStateChange: (_key, state) => changes.push(state) });
    const ran = (verdict: 'delivered' | 'transient') => async () => ({ verdict, value: verdict });
    await b.run('k', ran('transient'));
    await b.run('k', ran('transient'));
    expect(b.state('k')).toBe('open');
    expect(b.halfOpensAt('k')).toBe(1_030_000);
    nowMs = 1_029_999;
    expect(b.state('k')).toBe('open');
    expect(await b.run('k', ran('delivered'))).toEqual({ kind: 'circuit-open' });
    nowMs = 1_030_000;
    expect(b.state('k')).toBe('half-open');
    expect(b.halfOpensAt('k')).toBeNull();
    let release: (() => void) | undefined;
    const trial = b.run('k', () => new Promise((resolve) => {
      release = () => resolve({ verdict: 'delivered', value: 'delivered' });
    }));
    // While the trial is in flight every other attempt fails fast.
    expect(await b.run('k', ran('delivered'))).toEqual({ kind: 'circuit-open' });
    release?.();
    expect(await trial).toMatchObject({ kind: 'ran', verdict: 'delivered' });
    expect(b.state('k')).toBe('closed');
    expect(changes).toEqual(['open', 'half-open', 'closed']);
  });

  it('a late answer from before it opened does not close it', async () => {
    let nowMs = 0;
    const b = new EndpointBreakers({ failuresToOpen: 2, openMs: 30_000, now: () => nowMs });
    let release: (() => void) | undefined;
    const slow = b.run('k', () => new Promise((resolve) => {
      release = () => resolve({ verdict: 'delivered', value: 1 });
    }));
    await b.run('k', async () => ({ verdict: 'transient', value: 2 }));
    await b.run('k', async () => ({ verdict: 'transient', value: 3 }));
    expect(b.state('k')).toBe('open');
    release?.();
    await slow;
    nowMs = 10_000;
    expect(b.state('k')).toBe('open');
  });
});

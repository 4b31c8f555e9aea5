/**
 * The credits view's pure parts: which clients are low against credits.lowThreshold (an unlimited
 * client never; at the threshold is not below it), which stored marks a check moves, the
 * threshold read from a config, and the credits as `smsgate status` prints them.
 */
import { describe, expect, it } from 'vitest';
import { isLow, lowCreditsChanges, type ClientCredits } from '../../src/accounts/low-credits.js';
import { creditFacts, type StatusFacts } from '../../src/admin/status-facts.js';
import { formatStatus } from '../../src/cli/commands/status.js';

const account = (client: string, available: number, unlimited = false): ClientCredits => ({
  clientId: client.length, client, unlimited, balance: available + 100, reserved: 100, available, partsPerSecond: null,
});

describe('low credits', () => {
  it('is below the threshold, with a balance, and only when a threshold is set', () => {
    expect(isLow({ unlimited: false, available: 999 }, 1_000)).toBe(true);
    expect(isLow({ unlimited: false, available: 1_000 }, 1_000)).toBe(false);
    expect(isLow({ unlimited: false, available: -5 }, undefined)).toBe(false);
    expect(isLow({ unlimited: true, available: 0 }, 1_000)).toBe(false);
  });

  it('moves only the marks that disagree with the client now', () => {
    const changes = lowCreditsChanges([
      { clientId: 1, client: 'fell', unlimited: false, available: 10, lowSince: null },
      { clientId: 2, client: 'still-low', unlimited: false, available: 10, lowSince: 1 },
      { clientId: 3, client: 'back', unlimited: false, available: 100, lowSince: 1 },
      { clientId: 4, client: 'made-unlimited', unlimited: true, available: 10, lowSince: 1 },
      { clientId: 5, client: 'fine', unlimited: false, available: 100, lowSince: null },
    ], 100);
    expect(changes).toEqual([
      { clientId: 1, client: 'fell', available: 10, low: true },
      { clientId: 3, client: 'back', available: 100, low: false },
      { clientId: 4, client: 'made-unlimited', available: 10, low: false },
    ]);
  });
});

describe('credits in smsgate status', () => {
  it('prints each client\'s balance, reserved, available and rate, unlimited ones as such, low ones marked', () => {
    const credits = creditFacts([account('acme', 500), { ...account('beta', 5_000), partsPerSecond: 50 }, account('free', 0, true)], 1_000);
    expect(credits.clients.map((c) => [c.client, c.low])).toEqual([['acme', true], ['beta', false], ['free', false]]);
    const facts: StatusFacts = {
      source: 'database', generatedAt: '2026-01-05T09:00:00.000Z', gateway: null, readiness: null, transports: null, queues: [], campaigns: [],
      webhooks: { deadLetters: 0, clients: [] }, credits, recentErrors: null,
    };
    const lines = formatStatus(facts, null);
    const at = lines.indexOf('credits (balance / reserved / available; send rate), low below 1000:');
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 4)).toEqual(['  acme: 600 / 100 / 500; no cap LOW', '  beta: 5100 / 100 / 5000; 50 parts/s', '  free: unlimited; no cap']);
  });
});

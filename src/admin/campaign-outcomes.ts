/**
 * A campaign's outcome breakdown, the one definition the status page, /status.json and
 * `smsgate campaign show` all print: recipients delivered; undelivered by the status their receipt
 * gave (UNDELIV, EXPIRED, REJECTD...); rejected by the code the submit got (a part the network never
 * took: ESME_RINVDSTADR, CMS_ERROR_500, or the engine's own after its attempts ran out); pending.
 * delivered + undelivered.total + rejected.total + pending is every recipient of the campaign.
 */
import type { UndeliveredGroup } from '../store/sqlite/status-store.js';

/** A count per status or code, largest first (ties by name), as a list so the order survives JSON. */
export type CountsByName = { name: string; recipients: number }[];

export interface OutcomeBreakdown {
  delivered: number;
  /** Reached the network, a receipt said it failed. */
  undelivered: { total: number; byStatus: CountsByName };
  /** Never taken by the network. */
  rejected: { total: number; byCode: CountsByName };
  pending: number;
}

/** What an undelivered recipient with no recorded status is counted under. */
export const UNKNOWN_STATUS = 'UNKNOWN';

function tally(groups: readonly UndeliveredGroup[]): { total: number; counts: CountsByName } {
  const byName = new Map<string, number>();
  for (const g of groups) {
    const name = g.lastStatus ?? UNKNOWN_STATUS;
    byName.set(name, (byName.get(name) ?? 0) + g.recipients);
  }
  const counts = [...byName].map(([name, recipients]) => ({ name, recipients }));
  counts.sort((a, b) => b.recipients - a.recipients || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { total: counts.reduce((sum, c) => sum + c.recipients, 0), counts };
}

/**
 * `recipients`: the campaign's recipients by summary status; `undelivered`: its undelivered ones
 * grouped (StatusQueries.undeliveredGroups), whose sum is recipients.undelivered.
 */
export function outcomeBreakdown(
  recipients: { delivered: number; pending: number },
  undelivered: readonly UndeliveredGroup[],
): OutcomeBreakdown {
  const failed = tally(undelivered.filter((g) => !g.rejected));
  const rejected = tally(undelivered.filter((g) => g.rejected));
  return {
    delivered: recipients.delivered,
    undelivered: { total: failed.total, byStatus: failed.counts },
    rejected: { total: rejected.total, byCode: rejected.counts },
    pending: recipients.pending,
  };
}

/** One line of text: `12 delivered, 3 undelivered (UNDELIV 2, EXPIRED 1), 1 rejected (ESME_RINVDSTADR 1), 0 pending`. */
export function formatOutcomes(o: OutcomeBreakdown): string {
  const list = (counts: CountsByName): string => (counts.length === 0 ? '' : ` (${counts.map((c) => `${c.name} ${c.recipients}`).join(', ')})`);
  return `${o.delivered} delivered, ${o.undelivered.total} undelivered${list(o.undelivered.byStatus)}, ${o.rejected.total} rejected${list(o.rejected.byCode)}, ${o.pending} pending`;
}

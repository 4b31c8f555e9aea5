/**
 * SPEC.md "Recipient processing rules": which of a request's recipients become recipients of the
 * campaign. Pure: the caller says whether the sender may reach Irish numbers.
 * - numbers are normalised by the SMS core; one that cannot be normalised is skipped (invalid);
 * - duplicates are detected after normalisation; the first entry and its ClientReference are kept;
 * - Irish numbers (353...) are skipped when the sender is not on the account's permitted list;
 * - numbers on the account's suppression list (opted out by keyword) are skipped.
 * One skipped number never stops the campaign.
 */
import { normalizeMsisdn, type NumberingPlan } from '../sms/index.js';
import type { RecipientRequest } from './campaign-request.js';

/** ITU-T E.164 country code of Ireland; normalised Irish numbers start with it. */
export const IRISH_COUNTRY_CODE = '353';

export interface PlannedRecipient {
  msisdn: string;
  clientReference: string | null;
}

export interface RecipientPlan {
  accepted: PlannedRecipient[];
  skipped: { invalid: number; duplicate: number; unpermitted: number; suppressed: number };
}

export interface RecipientPlanOptions {
  senderPermittedForIreland: boolean;
  /** The deployment's numbering plan (config numbering.country); default Ireland's (SPEC.md). */
  numbering?: NumberingPlan;
  /** The client's suppression list (opted-out numbers); none by default. */
  suppressed?: ReadonlySet<string>;
}

export function planRecipients(
  requested: readonly RecipientRequest[],
  options: RecipientPlanOptions,
): RecipientPlan {
  const planner = new RecipientPlanner(options);
  planner.add(requested);
  return planner.plan();
}

/**
 * The same rules fed a slice at a time (the processor yields to the event loop between slices of a
 * large campaign); duplicates are found across slices.
 */
export class RecipientPlanner {
  private accepted: PlannedRecipient[] = [];
  private drainedCount = 0;
  private readonly skipped = { invalid: 0, duplicate: 0, unpermitted: 0, suppressed: 0 };
  private readonly seen = new Set<string>();

  constructor(private readonly options: RecipientPlanOptions) {}

  add(requested: readonly RecipientRequest[]): void {
    const { accepted, skipped, seen } = this;
    for (const entry of requested) {
      const normalized = normalizeMsisdn(entry.msisdn, this.options.numbering);
      if (!normalized.ok) {
        skipped.invalid++;
        continue;
      }
      const { msisdn } = normalized;
      if (seen.has(msisdn)) {
        skipped.duplicate++;
        continue;
      }
      // Marked as seen before the permission check: a later duplicate of an unpermitted number is a
      // duplicate either way, and the count of each reason stays exact.
      seen.add(msisdn);
      if (!this.options.senderPermittedForIreland && msisdn.startsWith(IRISH_COUNTRY_CODE)) {
        skipped.unpermitted++;
        continue;
      }
      if (this.options.suppressed?.has(msisdn) === true) {
        skipped.suppressed++;
        continue;
      }
      accepted.push({ msisdn, clientReference: entry.clientReference });
    }
  }

  /**
   * The recipients accepted since the last drain, in request order, handed over so a caller that
   * writes them as it goes (the processor, a transaction at a time) never holds all of a
   * million-recipient campaign's at once. plan() then returns only those not drained.
   */
  drainAccepted(): PlannedRecipient[] {
    const drained = this.accepted;
    this.accepted = [];
    this.drainedCount += drained.length;
    return drained;
  }

  /** Recipients accepted so far, drained or not. */
  get acceptedCount(): number {
    return this.drainedCount + this.accepted.length;
  }

  plan(): RecipientPlan {
    return { accepted: this.accepted, skipped: { ...this.skipped } };
  }
}

/**
 * SPEC.md `from`: for Irish recipients the sender id must be on the permitted list. Sender types
 * (legacy v2 Sender entry): 0 registered with the national regulator and 2 numeric permit; 1
 * (international, not approved by that regulator) does not, and neither does an unlisted sender.
 */
export const SENDER_TYPES_PERMITTED_FOR_IRELAND: ReadonlySet<number> = new Set([0, 2]);

export function isPermittedForIreland(senderType: number | undefined): boolean {
  return senderType !== undefined && SENDER_TYPES_PERMITTED_FOR_IRELAND.has(senderType);
}

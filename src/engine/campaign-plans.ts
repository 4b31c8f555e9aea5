/**
 * Plans each campaign's text once (SMS core: encoding and split into parts) and keeps the result
 * for every recipient of that campaign: the text is the same for all of them. Bounded: the
 * oldest-used campaign is forgotten past maxCampaigns and planned again if needed. A campaign an
 * SMPP customer cut itself is planned as its one part (customer-cut-plan.ts).
 */
import { planMessage, validateSender, type Encoding } from '../sms/index.js';
import type { CutRefusal } from '../transports/customer-cut.js';
import type { OutboundCustomerCut, OutboundSender } from '../transports/transport.js';
import { planCustomerCut } from './customer-cut-plan.js';

export interface CampaignPlan {
  encoding: Encoding;
  segments: readonly string[];
  /** Undefined when the stored sender no longer passes the sender rules (its parts fail as INVALID_SENDER). */
  sender: OutboundSender | undefined;
  /** The sender as stored on the campaign (the webhook's From). */
  senderText: string;
  /** Set for a part an SMPP customer cut with a header: its one segment goes out as they cut it. */
  customerCut?: OutboundCustomerCut;
  /** Set when the campaign's parts can never go (a customer's cut that does not fit): each fails permanently with its status. */
  refusal?: CutRefusal;
}

export interface CampaignTexts {
  id: string;
  sender: string;
  text: string;
  text_sent: string | null;
  /** The CustomerCut JSON of a campaign an SMPP customer submitted; null or absent for any other. */
  smpp_submit?: string | null;
}

export class CampaignPlans {
  private readonly plans = new Map<string, CampaignPlan>();

  constructor(private readonly maxCampaigns = 256) {}

  planFor(campaign: CampaignTexts): CampaignPlan {
    const cached = this.plans.get(campaign.id);
    if (cached !== undefined) {
      // Re-insert to mark it most recently used (Map keeps insertion order).
      this.plans.delete(campaign.id);
      this.plans.set(campaign.id, cached);
      return cached;
    }
    const plan = makePlan(campaign);
    this.plans.set(campaign.id, plan);
    if (this.plans.size > this.maxCampaigns) {
      const oldest = this.plans.keys().next().value;
      if (oldest !== undefined) this.plans.delete(oldest);
    }
    return plan;
  }

  /** The plan if this campaign was planned already; lanes use it to avoid a campaign lookup per part. */
  cached(campaignId: string): CampaignPlan | undefined {
    return this.plans.get(campaignId);
  }
}

/** A campaign's plan: pure, the same on every node and backend. */
export function makePlan(campaign: CampaignTexts): CampaignPlan {
  const sender = validateSender(campaign.sender);
  const common = {
    sender: sender.ok ? { value: sender.value, kind: sender.kind, ton: sender.ton, npi: sender.npi } : undefined,
    senderText: campaign.sender,
  };
  // The customer's decoded text, as they sent it: the spec's replacements are for texts smsgate cuts.
  const cut = planCustomerCut(campaign.smpp_submit, campaign.text);
  if (cut.kind === 'cut') return { ...common, encoding: cut.encoding, segments: [cut.segment], customerCut: cut.cut };
  if (cut.kind === 'refused') return { ...common, encoding: 'GSM-7', segments: [cut.segment], refusal: cut.refusal };
  // text_sent is the text after the spec's replacements; planning it again is idempotent.
  const plan = planMessage(campaign.text_sent ?? campaign.text);
  return { ...common, encoding: plan.encoding, segments: plan.segments };
}

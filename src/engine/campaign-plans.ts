/**
 * Plans each campaign's text once (SMS core: encoding and split into parts) and keeps the result
 * for every recipient of that campaign: the text is the same for all of them. Bounded: the
 * oldest-used campaign is forgotten past maxCampaigns and planned again if needed.
 */
import { planMessage, validateSender, type Encoding } from '../sms/index.js';
import type { OutboundSender } from '../transports/transport.js';

export interface CampaignPlan {
  encoding: Encoding;
  segments: readonly string[];
  /** Undefined when the stored sender no longer passes the sender rules (its parts fail as INVALID_SENDER). */
  sender: OutboundSender | undefined;
  /** The sender as stored on the campaign (the webhook's From). */
  senderText: string;
}

export interface CampaignTexts {
  id: string;
  sender: string;
  text: string;
  text_sent: string | null;
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

function makePlan(campaign: CampaignTexts): CampaignPlan {
  // text_sent is the text after the spec's replacements; planning it again is idempotent.
  const plan = planMessage(campaign.text_sent ?? campaign.text);
  const sender = validateSender(campaign.sender);
  return {
    encoding: plan.encoding,
    segments: plan.segments,
    sender: sender.ok ? { value: sender.value, kind: sender.kind, ton: sender.ton, npi: sender.npi } : undefined,
    senderText: campaign.sender,
  };
}

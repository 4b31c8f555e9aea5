/**
 * What a committed materialise pass tells (steps/materialise.ts plans it): one NO_ROUTE warning per
 * campaign, a line per campaign fully dispatched, and the engine's result (lanes and the webhook
 * sender to wake). Told only after the commit: a rolled-back pass did none of it.
 */
import type { Logger } from '../common/log.js';
import type { MaterialiseWritten } from '../store/dispatch-steps.js';
import type { MaterialisePlan, MaterializeResult } from './steps/materialise.js';

export class MaterialiseReport {
  private readonly noRoute: NoRouteWarnings;

  constructor(private readonly logger: Logger) {
    this.noRoute = new NoRouteWarnings(logger);
  }

  committed(plan: MaterialisePlan, written: MaterialiseWritten): MaterializeResult {
    for (const recipient of plan.unrouted) this.noRoute.warn(recipient.campaignId, recipient.msisdn, recipient.routed);
    for (const campaignId of written.closedCampaigns) this.logger.info({ campaignId }, 'campaign fully dispatched to transports');
    return { recipients: plan.recipients, queuedByTransport: plan.queuedByTransport, webhooksEnqueued: written.webhooksQueued > 0 };
  }
}

/** One NO_ROUTE warning per campaign, not per recipient. */
class NoRouteWarnings {
  private readonly warned = new Set<string>();

  constructor(private readonly logger: Logger) {}

  warn(campaignId: string, msisdn: string, routed: string | undefined): void {
    if (this.warned.has(campaignId)) return;
    // Bounded: forgetting old campaigns only means one more warning if they ever come back.
    if (this.warned.size >= 10_000) this.warned.clear();
    this.warned.add(campaignId);
    this.logger.warn(
      { campaignId, example: msisdn, transport: routed },
      routed === undefined
        ? 'no route matches some recipients of this campaign: their parts are undelivered with status NO_ROUTE'
        : `route names transport '${routed}', which is not running: parts undelivered with status NO_ROUTE`,
    );
  }
}

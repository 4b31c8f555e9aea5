/** The campaign area: accept and summarise (CampaignService), process to ready (CampaignProcessor). */
export { CampaignService, CAMPAIGN_ERROR } from './campaign-service.js';
export type { CampaignOwner, CampaignSummary, CampaignServiceOptions } from './campaign-service.js';
export { CampaignProcessor, DEFAULT_PROCESSING_POLL_INTERVAL_MS, RECIPIENTS_PER_TRANSACTION, sendAtInstantMs } from './campaign-processor.js';
export type { CampaignProcessorOptions } from './campaign-processor.js';
export { validateCampaignRequest, formatValidationDetail, CAMPAIGN_LIMITS, DEFAULT_CAMPAIGN_NAME } from './campaign-request.js';
export type { CampaignRequest, CampaignRequestResult, RecipientRequest } from './campaign-request.js';
export { planRecipients, isPermittedForIreland, IRISH_COUNTRY_CODE, SENDER_TYPES_PERMITTED_FOR_IRELAND } from './recipient-plan.js';
export type { PlannedRecipient, RecipientPlan } from './recipient-plan.js';
export { parseSendAt, dublinLocalToUtcMs, isValidTimeZone, localToUtcMs, SEND_AT_PATTERN, SEND_AT_ZONE } from './send-at.js';
export type { LocalMinute, SendAtParse } from './send-at.js';

/**
 * Signed delivery-receipt webhooks: the outbox (enqueueDeliveryReceipt, called inside the engine's
 * receipt transaction), signing (signBody/verifySignature), and the WebhookSender that delivers with
 * retries, a circuit breaker per endpoint and dead letters.
 */
export { enqueueDeliveryReceipt, enqueueDeliveryReceipts } from './enqueue.js';
export { serializeDeliveryReceipt, MAX_WEBHOOK_STATUS_CHARS, MAX_CLIENT_REFERENCE_CHARS } from './delivery-receipt.js';
export type { DeliveryReceiptEvent } from './delivery-receipt.js';
export { signBody, verifySignature, SIGNATURE_HEADER } from './signature.js';
export { classifyHttpStatus, nextWebhookAttemptAt, maxWebhookAttempts, RETRYABLE_4XX } from './retry-policy.js';
export type { AttemptVerdict } from './retry-policy.js';
export { DEFAULT_WEBHOOK_CONFIG } from './config.js';
export type { WebhookSenderConfig } from './config.js';
export { WebhookSender, WEBHOOK_CONTENT_TYPE, WEBHOOK_USER_AGENT, INBOUND_WEBHOOK_USER_AGENT, WEBHOOK_ERROR, EVENT_ID_HEADER } from './webhook-sender.js';
export { RedriveSchedule } from './redrive-schedule.js';
export type { WebhookSenderOptions, WebhookSenderStats } from './webhook-sender.js';
export { createNodeHttpClient } from './http-client.js';
export { createUndiciHttpClient } from './undici-http-client.js';
export type { WebhookHttpClient, WebhookRequest, WebhookResponse } from './http-client.js';
export { EndpointBreakers } from './endpoint-breakers.js';
export { parseSinceTime } from './since-time.js';
export type { SinceTime } from './since-time.js';
export { SqliteWebhookOutbox } from './sqlite/outbox.js';
export { PgWebhookOutbox } from './postgres/outbox.js';
export type { WebhookOutbox, ResultsWritten, ProbeOutcome } from './outbox.js';
export { createGatewayWebhookSender, senderPlacement } from './gateway-sender.js';
export type { GatewaySenderSetup, GatewayWebhookSender, SenderPlacement } from './gateway-sender.js';

/**
 * JSON Schemas (draft-07, for ajv 8) of the config file. Defaults live here, next to the rules, so
 * one place says what an omitted key means; the engine, webhooks and processing sections' come from
 * the modules that own those numbers (ENGINE_DEFAULTS, DEFAULT_WEBHOOK_CONFIG,
 * DEFAULT_PROCESSING_POLL_INTERVAL_MS), which also apply them when a library user passes none. Every object is closed (`additionalProperties: false`):
 * a misspelt key is an error that names it, never a silently ignored setting.
 *
 * Transport entries are checked in two steps: the common part (`name`, `type`) here, then the
 * entry's own schema chosen by `type` (TRANSPORT_SCHEMAS), so an error names the right fields.
 */

import { adminConfigSchema } from '../admin/admin-config.js';
import { DEFAULT_PROCESSING_POLL_INTERVAL_MS } from '../campaigns/campaign-processor.js';
import { SEND_AT_ZONE } from '../campaigns/send-at.js';
import { DEFAULT_NUMBERING_COUNTRY, NUMBERING_COUNTRIES } from '../sms/numbering.js';
import { ENGINE_DEFAULTS } from '../engine/config.js';
import { MODEM_TRANSPORT_SCHEMA } from '../transports/modem/config.js';
import { SMPP_TRANSPORT_SCHEMA } from '../transports/smpp/config.js';
import { simulatorConfigSchema } from '../transports/simulator/config.js';
import { DEFAULT_WEBHOOK_CONFIG } from '../webhooks/config.js';

const positiveInt = { type: 'integer', minimum: 1 } as const;
const nonNegativeInt = { type: 'integer', minimum: 0 } as const;
const nonEmptyString = { type: 'string', minLength: 1 } as const;

const databaseSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    path: { ...nonEmptyString, default: 'data/smsgate.sqlite' },
    synchronous: { enum: ['FULL', 'NORMAL'], default: 'FULL' },
    // No default here: it is derived from `path` after validation (defaultKeyFileFor).
    keyFile: nonEmptyString,
  },
} as const;

const apiSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    host: { ...nonEmptyString, default: '127.0.0.1' },
    // 0 asks the OS for a free port (tests).
    port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
    maxBodyBytes: { ...positiveInt, default: 67108864 },
    // Request body bytes held across all requests in flight; left out: DEFAULT_MAX_BUFFERED_BYTES (src/api/body-budget.ts).
    maxBufferedBytes: positiveInt,
  },
} as const;

const authSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    // Tokens read `<patPrefix>_pat_<random>`: characters that survive a header and a shell unquoted.
    patPrefix: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$', default: 'smsgate' },
    clientId: { ...nonEmptyString, default: 'messaging-api' },
    issuer: { ...nonEmptyString, default: 'smsgate' },
    accessTokenSeconds: { ...positiveInt, default: 300 },
    refreshTokenSeconds: { ...positiveInt, default: 1800 },
    legacy: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        clientId: { ...nonEmptyString, default: 'legacy-api' },
        // SPEC "Authentication" §6: legacy access tokens expire after 120 s, refresh tokens after 1,200 s.
        accessTokenSeconds: { ...positiveInt, default: 120 },
        refreshTokenSeconds: { ...positiveInt, default: 1200 },
      },
    },
    bruteForce: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        windowMs: { ...positiveInt, default: 900000 },
        maxFailuresPerUsername: { ...positiveInt, default: 10 },
        maxFailuresPerAddress: { ...positiveInt, default: 100 },
      },
    },
  },
} as const;

const engineSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    batchSize: { ...positiveInt, default: ENGINE_DEFAULTS.batchSize },
    pollIntervalMs: { ...positiveInt, default: ENGINE_DEFAULTS.pollIntervalMs },
    maxAttempts: { ...positiveInt, default: ENGINE_DEFAULTS.maxAttempts },
    retryBaseDelayMs: { ...nonNegativeInt, default: ENGINE_DEFAULTS.retryBaseDelayMs },
    retryMaxDelayMs: { ...nonNegativeInt, default: ENGINE_DEFAULTS.retryMaxDelayMs },
    unmatchedReceiptTtlMs: { ...positiveInt, default: ENGINE_DEFAULTS.unmatchedReceiptTtlMs },
    drainTimeoutMs: { ...nonNegativeInt, default: ENGINE_DEFAULTS.drainTimeoutMs },
  },
} as const;

const webhooksSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    timeoutMs: { ...positiveInt, default: DEFAULT_WEBHOOK_CONFIG.timeoutMs },
    // SPEC "Events" §6: up to three retries, about 2, 4 and 8 seconds apart.
    retryDelaysMs: { type: 'array', items: nonNegativeInt, default: DEFAULT_WEBHOOK_CONFIG.retryDelaysMs },
    // SPEC "Events" §7: the breaker opens for 30 seconds after two transient failures.
    breakerOpenMs: { ...positiveInt, default: DEFAULT_WEBHOOK_CONFIG.breakerOpenMs },
    breakerFailures: { ...positiveInt, default: DEFAULT_WEBHOOK_CONFIG.breakerFailures },
    concurrency: { ...positiveInt, default: DEFAULT_WEBHOOK_CONFIG.concurrency },
    // Issue 9 item 7: transient dead letters younger than this are redriven when their endpoint recovers; 0: off.
    redriveWithinMs: { ...nonNegativeInt, default: DEFAULT_WEBHOOK_CONFIG.redriveWithinMs },
  },
} as const;

const loggingSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    logMessageText: { type: 'boolean', default: false },
    file: { type: 'string', minLength: 1 },
  },
} as const;

const processingSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    pollIntervalMs: { ...positiveInt, default: DEFAULT_PROCESSING_POLL_INTERVAL_MS },
  },
} as const;

const numberingSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    // SPEC.md's Irish (and UK mobile) rules unless a deployment elsewhere names its country (src/sms/numbering.ts).
    country: { enum: NUMBERING_COUNTRIES, default: DEFAULT_NUMBERING_COUNTRY },
  },
} as const;

const schedulingSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    // SPEC.md Scheduling rule 1; checked as an IANA zone after validation (config/index.ts).
    timeZone: { ...nonEmptyString, default: SEND_AT_ZONE },
  },
} as const;

export const TRANSPORT_TYPES = ['simulator', 'smpp', 'modem'] as const;

const transportCommonSchema = {
  type: 'object',
  required: ['name', 'type'],
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' },
    type: { enum: TRANSPORT_TYPES },
  },
} as const;

const routeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['prefix', 'transport'],
  properties: {
    // Matched against the normalised msisdn, which is digits only; "" matches every number.
    prefix: { type: 'string', pattern: '^[0-9]{0,20}$' },
    transport: nonEmptyString,
  },
} as const;

/** The whole file except the per-type fields of transport entries. */
export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // Lets editors find a schema; ignored by smsgate.
    $schema: { type: 'string' },
    database: databaseSchema,
    api: apiSchema,
    auth: authSchema,
    transports: { type: 'array', minItems: 1, items: transportCommonSchema, default: [{ name: 'sim', type: 'simulator' }] },
    routes: { type: 'array', items: routeSchema },
    engine: engineSchema,
    webhooks: webhooksSchema,
    logging: loggingSchema,
    processing: processingSchema,
    // No default: without the section there is no admin listener (issue 13).
    admin: adminConfigSchema,
    numbering: numberingSchema,
    scheduling: schedulingSchema,
  },
} as const;

export const TRANSPORT_SCHEMAS = {
  simulator: simulatorConfigSchema,
  smpp: SMPP_TRANSPORT_SCHEMA,
  modem: MODEM_TRANSPORT_SCHEMA,
} as const;

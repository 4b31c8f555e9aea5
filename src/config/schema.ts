/**
 * JSON Schemas (draft-07, for ajv 8) of the config file. Defaults live here, next to the rules, so
 * one place says what an omitted key means. Every object is closed (`additionalProperties: false`):
 * a misspelt key is an error that names it, never a silently ignored setting.
 *
 * Transport entries are checked in two steps: the common part (`name`, `type`) here, then the
 * entry's own schema chosen by `type` (TRANSPORT_SCHEMAS), so an error names the right fields.
 */

import { simulatorConfigSchema } from '../transports/simulator/config.js';

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
    batchSize: { ...positiveInt, default: 500 },
    pollIntervalMs: { ...positiveInt, default: 200 },
    maxAttempts: { ...positiveInt, default: 5 },
    retryBaseDelayMs: { ...nonNegativeInt, default: 2000 },
    retryMaxDelayMs: { ...nonNegativeInt, default: 300000 },
    unmatchedReceiptTtlMs: { ...positiveInt, default: 172800000 },
    drainTimeoutMs: { ...nonNegativeInt, default: 10000 },
  },
} as const;

const webhooksSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    timeoutMs: { ...positiveInt, default: 10000 },
    // SPEC "Events" §6: up to three retries, about 2, 4 and 8 seconds apart.
    retryDelaysMs: { type: 'array', items: nonNegativeInt, default: [2000, 4000, 8000] },
    // SPEC "Events" §7: the breaker opens for 30 seconds after two transient failures.
    breakerOpenMs: { ...positiveInt, default: 30000 },
    breakerFailures: { ...positiveInt, default: 2 },
    concurrency: { ...positiveInt, default: 16 },
  },
} as const;

const loggingSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    logMessageText: { type: 'boolean', default: false },
  },
} as const;

const processingSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    pollIntervalMs: { ...positiveInt, default: 200 },
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
  },
} as const;

/** Fields of SmppTransportConfig (src/transports/smpp/config.ts); the transport applies its defaults. */
const smppSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type', 'host', 'port', 'systemId', 'password'],
  properties: {
    name: { type: 'string' },
    type: { const: 'smpp' },
    host: nonEmptyString,
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    tls: { type: 'boolean' },
    tlsRejectUnauthorized: { type: 'boolean' },
    // SMPP 3.4 §4.1.1: system_id is a C-Octet String of at most 16 octets, password 9, system_type 13.
    systemId: { type: 'string', minLength: 1, maxLength: 15 },
    password: { type: 'string', maxLength: 8 },
    systemType: { type: 'string', maxLength: 12 },
    bindMode: { enum: ['transceiver', 'transmitter-receiver'], default: 'transceiver' },
    binds: { type: 'integer', minimum: 1, maximum: 64 },
    window: { type: 'integer', minimum: 1, maximum: 1000 },
    maxPerSecond: positiveInt,
    enquireLinkIntervalMs: positiveInt,
    responseTimeoutMs: positiveInt,
    reconnect: {
      type: 'object',
      additionalProperties: false,
      properties: { initialDelayMs: positiveInt, maxDelayMs: positiveInt, authFailureDelayMs: positiveInt },
    },
    dataCoding: {
      type: 'object',
      additionalProperties: false,
      properties: { gsm7: { enum: [0, 1, 3] } },
    },
    concatenation: { enum: ['udh8', 'udh16', 'sar', 'payload'] },
    // SMPP 3.4 §5.2.17: registered_delivery is one octet.
    registeredDelivery: { type: 'integer', minimum: 0, maximum: 255 },
    // SMPP 3.4 §7.1: absolute or relative time format, 16 characters.
    validityPeriod: { type: 'string', pattern: '^[0-9]{12}[0-9][0-9]{2}[+\\-R]$' },
    // SMPP 3.4 §5.2.14: priority_flag 0..3.
    priority: { type: 'integer', minimum: 0, maximum: 3 },
    messageIdFormat: { enum: ['as-is', 'hex-to-dec', 'dec-to-hex'] },
    // SMPP 3.4 §5.2.5 / §5.2.6.
    sourceTon: { type: 'integer', minimum: 0, maximum: 6 },
    sourceNpi: { type: 'integer', minimum: 0, maximum: 18 },
    drainTimeoutMs: nonNegativeInt,
  },
} as const;

/** Fields of ModemTransportConfig (src/transports/modem/config.ts); the transport applies its defaults. */
const modemSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type', 'devices'],
  properties: {
    name: { type: 'string' },
    type: { const: 'modem' },
    devices: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['path'],
        properties: {
          path: nonEmptyString,
          name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' },
          profile: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$' },
          baudRate: positiveInt,
          pin: { type: 'string', pattern: '^[0-9]{4,8}$' },
          smsc: { type: 'string', pattern: '^\\+?[0-9]{1,20}$' },
          messagesPerMinute: positiveInt,
        },
      },
    },
    statusReports: { type: 'boolean' },
    receiptMatchWindowMs: positiveInt,
    registrationTimeoutMs: positiveInt,
    healthIntervalMs: positiveInt,
    reopenBackoffMs: { type: 'array', minItems: 1, items: positiveInt },
    maxAttemptsPerPart: positiveInt,
    retryDelayMs: nonNegativeInt,
    // 3GPP TS 23.040 §9.2.3.12.1: relative TP-VP spans 5 minutes to 63 weeks.
    validityMinutes: { type: 'integer', minimum: 5, maximum: 635040 },
    profilesDir: nonEmptyString,
  },
} as const;

export const TRANSPORT_SCHEMAS = {
  simulator: simulatorConfigSchema,
  smpp: smppSchema,
  modem: modemSchema,
} as const;

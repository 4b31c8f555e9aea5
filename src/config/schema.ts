/**
 * JSON Schemas (draft-07, for ajv 8) of the config file. Defaults live next to the rules, so one
 * place says what an omitted key means. This module holds the sections config/ owns (database, api,
 * auth, logging, routes, the common part of transport entries); the composition root
 * (src/gateway/config.ts) hands in the feature modules' sections (engine, webhooks, processing,
 * admin, numbering, scheduling) and the transport registry's types and schemas, so config/ imports no
 * feature module. Every object is closed (`additionalProperties: false`):
 * a misspelt key is an error that names it, never a silently ignored setting.
 *
 * Transport entries are checked in two steps: the common part (`name`, `type`) here, then the
 * entry's own schema chosen by `type` (from the registry), so an error names the right fields.
 */

export const positiveInt = { type: 'integer', minimum: 1 } as const;
export const nonNegativeInt = { type: 'integer', minimum: 0 } as const;
export const nonEmptyString = { type: 'string', minLength: 1 } as const;

/** A config section: closed (a misspelt key is an error naming it) and `{}` when left out, so its keys' defaults apply. */
export function section(properties: Readonly<Record<string, object>>): object {
  return { type: 'object', additionalProperties: false, default: {}, properties };
}

const databaseSchema = section({
  // No default here: `path` and `url` are exclusive, so an omitted path is filled after the check
  // (src/config/database.ts DEFAULT_DATABASE_PATH).
  path: nonEmptyString,
  url: nonEmptyString,
  synchronous: { enum: ['FULL', 'NORMAL'], default: 'FULL' },
  // No default here: it is derived from `path` after validation (defaultKeyFileFor).
  keyFile: nonEmptyString,
});

const apiSchema = section({
  host: { ...nonEmptyString, default: '127.0.0.1' },
  // 0 asks the OS for a free port (tests).
  port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
  maxBodyBytes: { ...positiveInt, default: 67108864 },
  // Request body bytes held across all requests in flight; left out: DEFAULT_MAX_BUFFERED_BYTES (src/api/body-budget.ts).
  maxBufferedBytes: positiveInt,
  // Per-client share and slow-body deadline; left out: the defaults in src/api/body-budget.ts and
  // src/api/read-json-body.ts (half of maxBufferedBytes, 4 uploads, 8192 bytes/s after 10000 ms).
  maxBufferedBytesPerClient: positiveInt,
  maxUploadsPerClient: positiveInt,
  minBodyBytesPerSecond: nonNegativeInt,
  bodyRateGraceMs: positiveInt,
});

const authSchema = section({
  // Tokens read `<patPrefix>_pat_<random>`: characters that survive a header and a shell unquoted.
  patPrefix: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$', default: 'smsgate' },
  clientId: { ...nonEmptyString, default: 'messaging-api' },
  issuer: { ...nonEmptyString, default: 'smsgate' },
  accessTokenSeconds: { ...positiveInt, default: 300 },
  refreshTokenSeconds: { ...positiveInt, default: 1800 },
  legacy: section({
    clientId: { ...nonEmptyString, default: 'legacy-api' },
    // SPEC "Authentication" §6: legacy access tokens expire after 120 s, refresh tokens after 1,200 s.
    accessTokenSeconds: { ...positiveInt, default: 120 },
    refreshTokenSeconds: { ...positiveInt, default: 1200 },
  }),
  bruteForce: section({
    windowMs: { ...positiveInt, default: 900000 },
    maxFailuresPerUsername: { ...positiveInt, default: 10 },
    maxFailuresPerAddress: { ...positiveInt, default: 100 },
  }),
});

export const loggingSchema = section({
  level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
  logMessageText: { type: 'boolean', default: false },
  file: { type: 'string', minLength: 1 },
});

/** The `smppServer` section's defaults, handed in by the composition root (the SMPP server owns them). */
export interface SmppServerSchemaDefaults {
  windowSize: number;
  enquireLinkIntervalMs: number;
  responseTimeoutMs: number;
  receiptRetentionHours: number;
}

/** The SMPP server listens on the SMPP port (IANA: smpp 2775) on loopback unless told otherwise. */
export const SMPP_SERVER_LISTEN_DEFAULTS = { host: '127.0.0.1', port: 2775 } as const;
/** Outstanding requests per session at most: a window past this is a memory risk, not a throughput gain. */
export const MAX_SMPP_SERVER_WINDOW = 1000;

/**
 * The `smppServer` section (the SMPP server for customers' ESMEs). No default for the section
 * itself: without it there is no server. The rules a schema cannot say (its port clashing with
 * the API's or the admin listener's, its TLS files readable) are checked after validation.
 */
export function smppServerSchema(defaults: SmppServerSchemaDefaults): object {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      host: { ...nonEmptyString, default: SMPP_SERVER_LISTEN_DEFAULTS.host },
      // 0 asks the OS for a free port (tests), as api.port and admin.port.
      port: { type: 'integer', minimum: 0, maximum: 65535, default: SMPP_SERVER_LISTEN_DEFAULTS.port },
      // PEM files; relative to the config file's directory.
      tls: {
        type: 'object',
        additionalProperties: false,
        required: ['certFile', 'keyFile'],
        properties: { certFile: nonEmptyString, keyFile: nonEmptyString },
      },
      windowSize: { ...positiveInt, maximum: MAX_SMPP_SERVER_WINDOW, default: defaults.windowSize },
      enquireLinkIntervalMs: { ...positiveInt, default: defaults.enquireLinkIntervalMs },
      responseTimeoutMs: { ...positiveInt, default: defaults.responseTimeoutMs },
      receiptRetentionHours: { ...positiveInt, default: defaults.receiptRetentionHours },
    },
  };
}

/** "HH:MM" of a 24-hour clock. */
const CLOCK_TIME = { type: 'string', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$' } as const;

/**
 * A route: `transport` (one) or `transports` with a `strategy`; which of the two, the transport
 * names and the time zone are checked after the schema (src/config/routes.ts), with messages
 * naming the key.
 */
const routeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['prefix'],
  properties: {
    // Matched against the normalised msisdn, which is digits only; "" matches every number.
    prefix: { type: 'string', pattern: '^[0-9]{0,20}$' },
    name: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,64}$' },
    transport: nonEmptyString,
    transports: {
      type: 'array',
      minItems: 1,
      items: {
        if: { type: 'string' },
        then: nonEmptyString,
        else: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: { name: nonEmptyString, weight: { type: 'number', exclusiveMinimum: 0 } },
        },
      },
    },
    strategy: { enum: ['failover', 'weighted'] },
    clients: { type: 'array', minItems: 1, uniqueItems: true, items: nonEmptyString },
    window: {
      type: 'object',
      additionalProperties: false,
      required: ['from', 'to', 'timeZone'],
      properties: { from: CLOCK_TIME, to: CLOCK_TIME, timeZone: nonEmptyString },
    },
    failoverAfterMs: positiveInt,
  },
} as const;

/**
 * The whole file except the per-type fields of transport entries. `sections` follow `routes` in
 * the order given (ajv reports the first error in schema order, so the order is part of the messages).
 */
export interface ConfigSchemaParts {
  /** The registered transport types, in the order "must be one of" lists them. */
  transportTypes: readonly string[];
  /** `transports` when the file has none. */
  defaultTransports: readonly { name: string; type: string }[];
  /** The feature modules' sections, by key. */
  sections: Readonly<Record<string, object>>;
}

export function buildConfigSchema({ transportTypes, defaultTransports, sections }: ConfigSchemaParts): object {
  const transportCommonSchema = {
    type: 'object',
    required: ['name', 'type'],
    properties: {
      name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' },
      type: { enum: transportTypes },
    },
  };
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      // Lets editors find a schema; ignored by smsgate.
      $schema: { type: 'string' },
      database: databaseSchema,
      api: apiSchema,
      auth: authSchema,
      transports: { type: 'array', minItems: 1, items: transportCommonSchema, default: defaultTransports },
      routes: { type: 'array', items: routeSchema },
      ...sections,
    },
  };
}

/** Where the published schema lives; `smsgate init` writes it as the starter file's `$schema`. */
export const PUBLISHED_SCHEMA_URL = 'https://raw.githubusercontent.com/smsgate/smsgate/main/config/smsgate.schema.json';

/**
 * The schema published as config/smsgate.schema.json (and printed by `smsgate config schema`):
 * the same schema the loader validates with, its transport entries completed by each type's own
 * schema (`if type is X then X's schema`), so an editor checks every key of the file. The loader
 * itself validates in two steps instead, for messages that name the entry's own fields.
 */
export function buildPublishedSchema(parts: ConfigSchemaParts, transports: readonly { type: string; schema: object }[]): object {
  const whole = acceptEnvReferences(buildConfigSchema(parts)) as { properties: Record<string, object> };
  const transportsSchema = whole.properties['transports'] as { items: object };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: PUBLISHED_SCHEMA_URL,
    title: 'smsgate configuration file',
    ...whole,
    properties: {
      ...whole.properties,
      transports: {
        ...transportsSchema,
        items: {
          ...transportsSchema.items,
          allOf: transports.map(({ type, schema }) => ({ if: { properties: { type: { const: type } }, required: ['type'] }, then: acceptEnvReferences(schema) })),
        },
      },
    },
  };
}

/** A string that is, or holds, a `${NAME}` or `${NAME:-fallback}` reference (src/config/interpolate.ts). */
const ENV_REFERENCE = { type: 'string', pattern: '\\$\\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\\}' } as const;

/**
 * A copy in which each string with a pattern also accepts an environment reference: the loader
 * checks the pattern after interpolation, so `"pin": "${MODEM1_PIN}"` is right in the file, and an
 * editor must not flag it.
 */
function acceptEnvReferences(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(acceptEnvReferences);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === 'default' || key === 'const' || key === 'enum' ? value : acceptEnvReferences(value)]));
  if (copy['type'] !== 'string' || typeof copy['pattern'] !== 'string') return copy;
  const { default: fallback, ...rule } = copy;
  return { ...(fallback === undefined ? {} : { default: fallback }), anyOf: [rule, ENV_REFERENCE] };
}

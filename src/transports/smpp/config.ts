/**
 * One SMPP carrier's config, as written in the config file's `transports` list, and the defaults
 * applied to it. The config module validates the shape (ajv); this module owns the meaning.
 */
import type { MessageIdMode } from '../../receipts/index.js';

export type SmppBindMode = 'transceiver' | 'transmitter-receiver';
/** SMPP 3.4 §5.2.19 data_coding used for GSM-7 text: 0 SMSC default (GSM), 1 IA5/ASCII, 3 Latin-1. */
export type Gsm7DataCoding = 0 | 1 | 3;
export type SmppConcatenation = 'udh8' | 'udh16' | 'sar' | 'payload';

export interface SmppReconnectConfig {
  /** First delay after a lost connection; doubles per failed attempt, with jitter. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** First delay after the SMSC refused our credentials (bind_resp 0x0D/0x0E/0x0F...): no retry storm. */
  authFailureDelayMs: number;
}

export interface SmppTransportConfig {
  name: string;
  type: 'smpp';
  host: string;
  port: number;
  tls?: boolean;
  /** TLS only: verify the SMSC certificate (default true). */
  tlsRejectUnauthorized?: boolean;
  systemId: string;
  password: string;
  systemType?: string;
  /** Default 'transceiver'. */
  bindMode?: SmppBindMode;
  binds?: number;
  /** submit_sm awaiting submit_sm_resp per bind. */
  window?: number;
  /** Parts per second for the whole carrier, shared by its binds. */
  maxPerSecond?: number;
  enquireLinkIntervalMs?: number;
  responseTimeoutMs?: number;
  reconnect?: Partial<SmppReconnectConfig>;
  dataCoding?: { gsm7?: Gsm7DataCoding };
  concatenation?: SmppConcatenation;
  /** SMPP 3.4 §5.2.17; 1 asks for a final receipt. */
  registeredDelivery?: number;
  /** SMPP 3.4 §7.1 time format, absolute or relative (e.g. "000001000000000R"). */
  validityPeriod?: string;
  /** SMPP 3.4 §5.2.14 priority_flag 0-3. */
  priority?: number;
  /** How the receipt's id is converted to the submit_sm_resp form (see normalizeMessageId). */
  messageIdFormat?: MessageIdMode;
  /** Override the sender rules' TON/NPI for every message of this carrier. */
  sourceTon?: number;
  sourceNpi?: number;
  /** How long stop() waits for in-flight responses when the caller gives no drainTimeoutMs. */
  drainTimeoutMs?: number;
}

export interface ResolvedSmppTransportConfig
  extends Required<Omit<SmppTransportConfig, 'reconnect' | 'dataCoding' | 'validityPeriod' | 'sourceTon' | 'sourceNpi' | 'systemType'>> {
  systemType: string;
  reconnect: SmppReconnectConfig;
  dataCoding: { gsm7: Gsm7DataCoding };
  validityPeriod?: string;
  sourceTon?: number;
  sourceNpi?: number;
}

export const SMPP_DEFAULTS = {
  tls: false,
  tlsRejectUnauthorized: true,
  bindMode: 'transceiver',
  systemType: '',
  binds: 1,
  window: 10,
  maxPerSecond: 100,
  enquireLinkIntervalMs: 30_000,
  responseTimeoutMs: 10_000,
  reconnect: { initialDelayMs: 1_000, maxDelayMs: 60_000, authFailureDelayMs: 30_000 },
  gsm7DataCoding: 0,
  concatenation: 'udh8',
  registeredDelivery: 1,
  priority: 0,
  messageIdFormat: 'as-is',
  drainTimeoutMs: 5_000,
} as const;

/** Applies the defaults above. Values are taken as given: the config schema checks ranges. */
export function resolveSmppConfig(config: SmppTransportConfig): ResolvedSmppTransportConfig {
  const resolved: ResolvedSmppTransportConfig = {
    name: config.name,
    type: 'smpp',
    host: config.host,
    port: config.port,
    tls: config.tls ?? SMPP_DEFAULTS.tls,
    tlsRejectUnauthorized: config.tlsRejectUnauthorized ?? SMPP_DEFAULTS.tlsRejectUnauthorized,
    systemId: config.systemId,
    password: config.password,
    systemType: config.systemType ?? SMPP_DEFAULTS.systemType,
    bindMode: config.bindMode ?? SMPP_DEFAULTS.bindMode,
    binds: config.binds ?? SMPP_DEFAULTS.binds,
    window: config.window ?? SMPP_DEFAULTS.window,
    maxPerSecond: config.maxPerSecond ?? SMPP_DEFAULTS.maxPerSecond,
    enquireLinkIntervalMs: config.enquireLinkIntervalMs ?? SMPP_DEFAULTS.enquireLinkIntervalMs,
    responseTimeoutMs: config.responseTimeoutMs ?? SMPP_DEFAULTS.responseTimeoutMs,
    reconnect: { ...SMPP_DEFAULTS.reconnect, ...config.reconnect },
    dataCoding: { gsm7: config.dataCoding?.gsm7 ?? SMPP_DEFAULTS.gsm7DataCoding },
    concatenation: config.concatenation ?? SMPP_DEFAULTS.concatenation,
    registeredDelivery: config.registeredDelivery ?? SMPP_DEFAULTS.registeredDelivery,
    priority: config.priority ?? SMPP_DEFAULTS.priority,
    messageIdFormat: config.messageIdFormat ?? SMPP_DEFAULTS.messageIdFormat,
    drainTimeoutMs: config.drainTimeoutMs ?? SMPP_DEFAULTS.drainTimeoutMs,
  };
  if (config.validityPeriod !== undefined) resolved.validityPeriod = config.validityPeriod;
  if (config.sourceTon !== undefined) resolved.sourceTon = config.sourceTon;
  if (config.sourceNpi !== undefined) resolved.sourceNpi = config.sourceNpi;
  return resolved;
}

/** Public name the brief asked for; same as resolveSmppConfig. */
export const applySmppDefaults = resolveSmppConfig;

/**
 * JSON schema of one SMPP transport entry, for the config module's ajv (draft-07 keywords only).
 * Unknown keys are rejected so a misspelt option is an error that names the key.
 */
export const SMPP_TRANSPORT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type', 'host', 'port', 'systemId', 'password'],
  properties: {
    name: { type: 'string', minLength: 1 },
    type: { const: 'smpp' },
    host: { type: 'string', minLength: 1 },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    tls: { type: 'boolean' },
    tlsRejectUnauthorized: { type: 'boolean' },
    // SMPP 3.4 §4.1.1 limits system_id to 15 octets, password to 8 and system_type to 12 (plus NUL),
    // but SMSCs in the field accept longer credentials, so a longer value is sent as given (the
    // transport logs a warning once) rather than refused at start.
    systemId: { type: 'string', minLength: 1, maxLength: 64 },
    password: { type: 'string', maxLength: 64 },
    systemType: { type: 'string', maxLength: 32 },
    bindMode: { enum: ['transceiver', 'transmitter-receiver'], default: 'transceiver' },
    binds: { type: 'integer', minimum: 1, maximum: 64 },
    window: { type: 'integer', minimum: 1, maximum: 1000 },
    maxPerSecond: { type: 'number', exclusiveMinimum: 0 },
    enquireLinkIntervalMs: { type: 'integer', minimum: 100 },
    responseTimeoutMs: { type: 'integer', minimum: 10 },
    reconnect: {
      type: 'object',
      additionalProperties: false,
      properties: {
        initialDelayMs: { type: 'integer', minimum: 0 },
        maxDelayMs: { type: 'integer', minimum: 0 },
        authFailureDelayMs: { type: 'integer', minimum: 0 },
      },
    },
    dataCoding: {
      type: 'object',
      additionalProperties: false,
      properties: { gsm7: { enum: [0, 1, 3] } },
    },
    concatenation: { enum: ['udh8', 'udh16', 'sar', 'payload'] },
    // SMPP 3.4 §5.2.17: registered_delivery is one octet.
    registeredDelivery: { type: 'integer', minimum: 0, maximum: 255 },
    // SMPP 3.4 §7.1.1: YYMMDDhhmmss, tenths, quarter-hours from UTC (00-48), then +, - or R (relative).
    validityPeriod: { type: 'string', pattern: '^(\\d{12}[0-9][0-4]\\d[+\\-R])?$' },
    // SMPP 3.4 §5.2.14: priority_flag 0..3.
    priority: { type: 'integer', minimum: 0, maximum: 3 },
    messageIdFormat: { enum: ['as-is', 'hex-to-dec', 'dec-to-hex'] },
    sourceTon: { type: 'integer', minimum: 0, maximum: 6 },
    sourceNpi: { type: 'integer', minimum: 0, maximum: 18 },
    drainTimeoutMs: { type: 'integer', minimum: 0 },
  },
} as const;

/** SMPP 3.4 §4.1.1 octet limits (without the NUL) of the bind credentials. */
export const SMPP34_CREDENTIAL_LIMITS = { systemId: 15, password: 8, systemType: 12 } as const;

/** The credential fields longer than SMPP 3.4 allows (sent as given; worth a warning). */
export function credentialsBeyondSmpp34(config: Pick<SmppTransportConfig, 'systemId' | 'password' | 'systemType'>): string[] {
  return (Object.keys(SMPP34_CREDENTIAL_LIMITS) as Array<keyof typeof SMPP34_CREDENTIAL_LIMITS>).filter(
    (key) => Buffer.byteLength(config[key] ?? '', 'latin1') > SMPP34_CREDENTIAL_LIMITS[key],
  );
}

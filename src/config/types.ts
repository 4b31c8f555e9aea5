/**
 * The shape of the config file (ARCHITECTURE.md, "Config"), after defaults are applied.
 * The ajv schemas in ./schema.ts accept exactly this; unknown keys are an error naming the key.
 * Relative paths are resolved against the current working directory (the README says so).
 */
import type { AdminConfig } from '../admin/admin-config.js';
import type { EngineConfig } from '../engine/config.js';
import type { NumberingCountry } from '../sms/numbering.js';
import type { ModemTransportConfig } from '../transports/modem/config.js';
import type { SimulatorTransportConfig } from '../transports/simulator/config.js';
import type { SmppTransportConfig } from '../transports/smpp/config.js';
import type { WebhookSenderConfig } from '../webhooks/config.js';

export interface DatabaseConfig {
  path: string;
  /** FULL by default: see src/store/database.ts. */
  synchronous: 'FULL' | 'NORMAL';
  /** AES-256-GCM key for stored secrets; default: beside the database (data/smsgate.key). */
  keyFile: string;
}

export interface ApiConfig {
  host: string;
  port: number;
  maxBodyBytes: number;
  /**
   * Bytes of request bodies held at once across all requests in flight; over it a request is
   * answered 503 with Retry-After. Left out: 256 MiB (src/api/body-budget.ts DEFAULT_MAX_BUFFERED_BYTES).
   */
  maxBufferedBytes?: number;
}

export interface LegacyAuthConfig {
  clientId: string;
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
}

/** Failed token requests counted in a sliding window; over a limit the endpoint answers 429. */
export interface BruteForceConfig {
  windowMs: number;
  maxFailuresPerUsername: number;
  maxFailuresPerAddress: number;
}

export interface AuthConfig {
  patPrefix: string;
  /** The current token endpoint's client_id (spec: messaging-api). */
  clientId: string;
  /** The JWT `iss` claim. */
  issuer: string;
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
  legacy: LegacyAuthConfig;
  bruteForce: BruteForceConfig;
}

/** The `engine` section: the dispatch engine owns its meaning and defaults (src/engine/config.ts). */
export type { EngineConfig } from '../engine/config.js';

/** The `webhooks` section: the sender owns its meaning and defaults (src/webhooks/config.ts). */
export type WebhooksConfig = WebhookSenderConfig;

export interface LoggingConfig {
  level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Message text appears in logs only when this is true (STYLE.md rule 12). */
  logMessageText: boolean;
  /**
   * `smsgate serve` writes JSON lines to this file instead of stdout, and reopens it on SIGHUP (for
   * logrotate). Unset: stdout, pretty when it is a terminal.
   */
  file?: string;
}

export interface ProcessingConfig {
  pollIntervalMs: number;
}

export interface RouteConfig {
  /** Longest matching prefix of the normalised msisdn wins; "" matches everything. */
  prefix: string;
  transport: string;
}

/**
 * Transport entries as the file gives them, validated per type against the transport's own
 * interface: the simulator's (with its exported schema), SmppTransportConfig and ModemTransportConfig.
 * Each transport module applies its own defaults, so unset optional fields stay absent here.
 */
export type { SimulatorTransportConfig, SmppTransportConfig, ModemTransportConfig };

export type TransportEntry = SimulatorTransportConfig | SmppTransportConfig | ModemTransportConfig;
export type TransportType = TransportEntry['type'];

/** Kept for modules written against the first skeleton: every entry has these two fields. */
export interface TransportConfigBase {
  name: string;
  type: TransportType;
}

/** How recipients' national numbers become international (src/sms/numbering.ts). */
export interface NumberingConfig {
  /** ISO 3166-1 alpha-2 of the deployment; IE (SPEC.md: Irish numbers and UK mobiles) by default. */
  country: NumberingCountry;
}

/** The zone sendAt is read in. */
export interface SchedulingConfig {
  /** An IANA zone; Europe/Dublin (SPEC.md Scheduling rule 1) by default. */
  timeZone: string;
}

export interface SmsGateConfig {
  database: DatabaseConfig;
  api: ApiConfig;
  auth: AuthConfig;
  transports: TransportEntry[];
  routes: RouteConfig[];
  engine: EngineConfig;
  webhooks: WebhooksConfig;
  logging: LoggingConfig;
  processing: ProcessingConfig;
  /** The admin listener (metrics, status page, readiness); absent means off. */
  admin?: AdminConfig;
  numbering: NumberingConfig;
  scheduling: SchedulingConfig;
}

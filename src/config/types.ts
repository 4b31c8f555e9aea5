/**
 * The shape of the config file (ARCHITECTURE.md, "Config"), after defaults are applied.
 * The ajv schemas in ./schema.ts accept exactly this; unknown keys are an error naming the key.
 * Relative paths are resolved against the current working directory (the README says so).
 */
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

export interface EngineConfig {
  batchSize: number;
  pollIntervalMs: number;
  maxAttempts: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  unmatchedReceiptTtlMs: number;
  drainTimeoutMs: number;
}

export interface WebhooksConfig {
  timeoutMs: number;
  /** Delay before each retry after a failed attempt (spec Events §6: about 2, 4 and 8 seconds). */
  retryDelaysMs: number[];
  /** Spec Events §7: the breaker opens for 30 s after two transient failures. */
  breakerOpenMs: number;
  breakerFailures: number;
  concurrency: number;
}

export interface LoggingConfig {
  level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Message text appears in logs only when this is true (STYLE.md rule 12). */
  logMessageText: boolean;
}

export interface ProcessingConfig {
  pollIntervalMs: number;
}

export interface RouteConfig {
  /** Longest matching prefix of the normalised msisdn wins; "" matches everything. */
  prefix: string;
  transport: string;
}

export interface SimulatorOutcomeConfig {
  /** Msisdn suffix this outcome applies to. */
  suffix: string;
  /** Receipt status, or `REJECT:<status>` for a permanent failure at submit, `TEMP:<status>` for a temporary one. */
  status: string;
}

/**
 * Transport entries as the file gives them, validated per type: the simulator's fields by
 * simulatorConfigSchema, SMPP per SmppTransportConfig, modem per ModemTransportConfig. Each transport
 * module applies its own defaults, so unset optional fields stay absent here.
 */
export interface SimulatorTransportEntry {
  name: string;
  type: 'simulator';
  maxPerSecond?: number;
  window?: number;
  receiptDelayMs?: number;
  outcomes?: SimulatorOutcomeConfig[];
  defaultStatus?: string;
}

export interface SmppTransportEntry {
  name: string;
  type: 'smpp';
  host: string;
  port: number;
  tls?: boolean;
  systemId: string;
  password: string;
  systemType?: string;
  bindMode: 'transceiver' | 'transmitter-receiver';
  binds?: number;
  window?: number;
  maxPerSecond?: number;
  enquireLinkIntervalMs?: number;
  responseTimeoutMs?: number;
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  dataCoding?: { gsm7: 0 | 1 | 3 };
  concatenation?: 'udh8' | 'udh16' | 'sar' | 'payload';
  registeredDelivery?: number;
  validityPeriod?: string;
  priority?: number;
  messageIdFormat?: 'as-is' | 'hex-to-dec' | 'dec-to-hex';
  sourceTon?: number;
  sourceNpi?: number;
}

export interface ModemDeviceEntry {
  path: string;
  profile?: string;
  baudRate?: number;
  pin?: string;
  smsc?: string;
  messagesPerMinute?: number;
}

export interface ModemTransportEntry {
  name: string;
  type: 'modem';
  devices: ModemDeviceEntry[];
  statusReports?: boolean;
  receiptMatchWindowMs?: number;
}

export type TransportEntry = SimulatorTransportEntry | SmppTransportEntry | ModemTransportEntry;
export type TransportType = TransportEntry['type'];

/** Kept for modules written against the first skeleton: every entry has these two fields. */
export interface TransportConfigBase {
  name: string;
  type: TransportType;
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
}

/**
 * The shape of the config file (ARCHITECTURE.md, "Config"), after defaults are applied.
 * The ajv schema in ./schema.ts must accept exactly this; unknown keys are an error naming the key.
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

export interface AuthConfig {
  patPrefix: string;
  /** The current token endpoint's client_id (spec: messaging-api). */
  clientId: string;
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
  legacy: LegacyAuthConfig;
}

export interface RouteConfig {
  /** Longest matching prefix of the normalised msisdn wins; "" matches everything. */
  prefix: string;
  transport: string;
}

/** Transport entries are validated by each transport's own schema; `name` and `type` are common. */
export interface TransportConfigBase {
  name: string;
  type: 'smpp' | 'modem' | 'simulator';
  [key: string]: unknown;
}

export interface SmsGateConfig {
  database: DatabaseConfig;
  api: ApiConfig;
  auth: AuthConfig;
  transports: TransportConfigBase[];
  routes: RouteConfig[];
  /** Everything else (engine, webhooks, logging...) is added by the module that owns it, with defaults. */
  [section: string]: unknown;
}

/**
 * The sections of the config file that config/ owns, after defaults are applied. The whole file's
 * type, with the feature modules' sections and the registry's transport entries, is SmsGateConfig
 * in src/gateway/config.ts (the composition root), so config/ imports no feature module.
 * Relative paths in a file are resolved against its directory (src/config/relative-paths.ts).
 */
export interface DatabaseConfig {
  /**
   * SQLite file (the default backend); default data/smsgate.sqlite. Also where the default keyFile
   * lives when `url` selects PostgreSQL.
   */
  path: string;
  /**
   * postgresql://user[:password]@host[:port]/database (also postgres://): selects PostgreSQL
   *. Exclusive with an explicit `path`. Never logged with its password.
   */
  url?: string;
  /** FULL by default: see src/store/sqlite/database.ts. */
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
  /** One client's share of maxBufferedBytes (429 past it). Left out: half of maxBufferedBytes. */
  maxBufferedBytesPerClient?: number;
  /** Request bodies one client may send at once (429 past it). Left out: 4. */
  maxUploadsPerClient?: number;
  /** The average rate a body must arrive at once bodyRateGraceMs have passed (408 below it); 0: none. Left out: 8192. */
  minBodyBytesPerSecond?: number;
  /** How long a body is read before its rate is measured. Left out: 10000. */
  bodyRateGraceMs?: number;
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

/** One transport of a multi-transport route: its name, or its name and weight (weighted routes; 1 when left out). */
export type RouteTransportConfig = string | { name: string; weight?: number };

/** When a route's parts may go out: local wall-clock times in an IANA time zone ("from" after "to" spans midnight). */
export interface RouteWindowConfig {
  /** "HH:MM", inclusive. */
  from: string;
  /** "HH:MM", exclusive. */
  to: string;
  timeZone: string;
}

interface RouteConfigCommon {
  /** Longest matching prefix of the normalised msisdn wins; "" matches everything. */
  prefix: string;
  /** The route's label in metrics and on the status page; left out: its prefix. */
  name?: string;
  /** Only these clients' parts take the route (by client name); left out: every client's. */
  clients?: string[];
  /** Outside it the route's parts wait, queued (docs/behaviour/routes.md). */
  window?: RouteWindowConfig;
  /** How long a listed transport may be down before its queued parts move to the next one (default 10000). */
  failoverAfterMs?: number;
}

/** A route to one transport (the original shape). */
export interface SingleRouteConfig extends RouteConfigCommon {
  transport: string;
  transports?: never;
  strategy?: never;
}

/** A route over several transports: the first one up (failover), or split by weight over those up (weighted). */
export interface MultiRouteConfig extends RouteConfigCommon {
  transport?: never;
  transports: RouteTransportConfig[];
  strategy: 'failover' | 'weighted';
}

export type RouteConfig = SingleRouteConfig | MultiRouteConfig;

/** What config/ itself reads of a loaded file: the rest it validates by the schemas it is handed. */
export interface ConfigCore {
  database: DatabaseConfig;
  transports: readonly { name: string; type: string }[];
  routes: RouteConfig[];
}

/** A rule a schema cannot say, broken: `key` as users read it (`admin.token`), `what` is wrong. */
export interface ConfigProblem {
  key: string;
  what: string;
}

/**
 * The composition root of the config file: config/ validates and reports, this
 * module hands it what the feature modules own (their sections' schemas and defaults, the transport
 * registry, the rules a schema cannot say). Arrows point inward: features and this root import
 * config/, never the other way.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { join } from 'node:path';
import { creditsSchema, pricingProblem, pricingSchema, type CreditsConfig } from '../accounts/config.js';
import type { PricingRule } from '../accounts/credits.js';
import { adminConfigProblem, adminConfigSchema, type AdminConfig } from '../admin/admin-config.js';
import { DEFAULT_PROCESSING_POLL_INTERVAL_MS } from '../campaigns/campaign-processor.js';
import { isValidTimeZone, SEND_AT_ZONE } from '../campaigns/send-at.js';
import { createConfigLoader, DEFAULT_CONFIG_PATH, loggingSchema, nonEmptyString, nonNegativeInt, positiveInt, section, smppServerSchema } from '../config/index.js';
import type { ApiConfig, AuthConfig, ConfigProblem, DatabaseConfig, LoggingConfig, RouteConfig } from '../config/types.js';
import { ENGINE_DEFAULTS, type EngineConfig } from '../engine/config.js';
import { isGatewayError } from '../common/errors.js';
import { SMPP_SERVER_DEFAULTS, type SmppServerConfig } from '../smpp-server/contracts.js';
import { INBOUND_REASSEMBLY_TIMEOUT_MS } from '../inbound/inbound-service.js';
import { DEFAULT_INBOUND_PART_LIMITS } from '../inbound/part-limits.js';
import { DEFAULT_NUMBERING_COUNTRY, NUMBERING_COUNTRIES, type NumberingCountry } from '../sms/numbering.js';
import { defaultKeyFileFor } from '../store/secret-box.js';
import { knownProfiles, loadProfile, packageRoot } from '../transports/modem/profile.js';
import { TRANSPORT_MODULES, type TransportEntry } from '../transports/registry.js';
import { DEFAULT_WEBHOOK_CONFIG, type WebhookSenderConfig } from '../webhooks/config.js';

export { CONFIG_SEARCH_ORDER, DEFAULT_CONFIG_PATH, type ConfigPurpose, type LoadOptions } from '../config/index.js';
export type * from '../config/types.js';
export type { EngineConfig } from '../engine/config.js';
export type { CreditsConfig } from '../accounts/config.js';
export type { PricingRule } from '../accounts/credits.js';
export type { ModemTransportConfig } from '../transports/modem/config.js';
export type { SimulatorTransportConfig } from '../transports/simulator/config.js';
export type { SmppTransportConfig } from '../transports/smpp/config.js';
export type { TransportEntry, TransportType } from '../transports/registry.js';
export type { SmppServerConfig } from '../smpp-server/contracts.js';

/** The `webhooks` section: the sender owns its meaning and defaults (src/webhooks/config.ts). */
export type WebhooksConfig = WebhookSenderConfig;

export interface ProcessingConfig {
  pollIntervalMs: number;
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

/** Mobile-originated messages (src/inbound, docs/behaviour/inbound-limits.md). */
export interface InboundConfig {
  /** A concatenated message still incomplete this long after its first part is delivered as what arrived. */
  reassemblyTimeoutMs: number;
  /** How often overdue groups are swept; left out: a tenth of the timeout, at most 30 s. */
  sweepIntervalMs?: number;
  /** Parts of incomplete messages held per originator (transport and sender); over it a part is refused. */
  maxPartsPerOriginator: number;
  /** Parts of incomplete messages held on the gateway; over it a part is refused. */
  maxParts: number;
}

/** The shape of the config file (ARCHITECTURE.md, "Config"), after defaults are applied. */
export interface SmsGateConfig {
  database: DatabaseConfig;
  api: ApiConfig;
  auth: AuthConfig;
  /** Validated per type against the transport's own schema; each transport applies its own defaults. */
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
  inbound: InboundConfig;
  /** What a part costs by destination prefix (longest wins); empty: every part costs 1 credit. */
  pricing: PricingRule[];
  credits: CreditsConfig;
  /**
   * The SMPP server for customers' ESMEs (src/smpp-server), with SMPP_SERVER_DEFAULTS applied;
   * absent means off. Not applied by a reload: a change needs a restart.
   */
  smppServer?: SmppServerConfig;
}

// The sections' defaults come from the modules that own those numbers (ENGINE_DEFAULTS,
// DEFAULT_WEBHOOK_CONFIG, DEFAULT_PROCESSING_POLL_INTERVAL_MS), which also apply them when a
// library user passes none.
const engineSchema = section({
  batchSize: { ...positiveInt, default: ENGINE_DEFAULTS.batchSize },
  pollIntervalMs: { ...positiveInt, default: ENGINE_DEFAULTS.pollIntervalMs },
  maxAttempts: { ...positiveInt, default: ENGINE_DEFAULTS.maxAttempts },
  retryBaseDelayMs: { ...nonNegativeInt, default: ENGINE_DEFAULTS.retryBaseDelayMs },
  retryMaxDelayMs: { ...nonNegativeInt, default: ENGINE_DEFAULTS.retryMaxDelayMs },
  unmatchedReceiptTtlMs: { ...positiveInt, default: ENGINE_DEFAULTS.unmatchedReceiptTtlMs },
  drainTimeoutMs: { ...nonNegativeInt, default: ENGINE_DEFAULTS.drainTimeoutMs },
});

const webhooksSchema = section({
  timeoutMs: { ...positiveInt, default: DEFAULT_WEBHOOK_CONFIG.timeoutMs },
  // SPEC "Events" §6: up to three retries, about 2, 4 and 8 seconds apart.
  retryDelaysMs: { type: 'array', items: nonNegativeInt, default: DEFAULT_WEBHOOK_CONFIG.retryDelaysMs },
  // SPEC "Events" §7: the breaker opens for 30 seconds after two transient failures.
  breakerOpenMs: { ...positiveInt, default: DEFAULT_WEBHOOK_CONFIG.breakerOpenMs },
  breakerFailures: { ...positiveInt, default: DEFAULT_WEBHOOK_CONFIG.breakerFailures },
  concurrency: { ...positiveInt, default: DEFAULT_WEBHOOK_CONFIG.concurrency },
  // Transient dead letters younger than this are redriven when their endpoint recovers; 0: off.
  redriveWithinMs: { ...nonNegativeInt, default: DEFAULT_WEBHOOK_CONFIG.redriveWithinMs },
});

const processingSchema = section({
  pollIntervalMs: { ...positiveInt, default: DEFAULT_PROCESSING_POLL_INTERVAL_MS },
});

const numberingSchema = section({
  // SPEC.md's Irish (and UK mobile) rules unless a deployment elsewhere names its country (src/sms/numbering.ts).
  country: { enum: NUMBERING_COUNTRIES, default: DEFAULT_NUMBERING_COUNTRY },
});

const schedulingSchema = section({
  // SPEC.md Scheduling rule 1; checked as an IANA zone after validation (timeZoneProblem).
  timeZone: { ...nonEmptyString, default: SEND_AT_ZONE },
});

const inboundSchema = section({
  reassemblyTimeoutMs: { ...positiveInt, default: INBOUND_REASSEMBLY_TIMEOUT_MS },
  sweepIntervalMs: positiveInt,
  // A 255-part message (TS 23.040 §9.2.3.24.1) must fit under the per-originator bound.
  maxPartsPerOriginator: { ...positiveInt, minimum: 255, default: DEFAULT_INBOUND_PART_LIMITS.maxPartsPerOriginator },
  maxParts: { ...positiveInt, minimum: 255, default: DEFAULT_INBOUND_PART_LIMITS.maxParts },
});

function adminProblem(config: SmsGateConfig): ConfigProblem | null {
  return config.admin === undefined ? null : adminConfigProblem(config.admin, config.api.port);
}

/**
 * The SMPP server's port is its own: never the API's or the admin listener's (a customer's ESME
 * would speak SMPP to an HTTP listener, or the second listener would fail at start). 0 picks a
 * free port and clashes with nothing.
 */
function smppServerProblem(config: SmsGateConfig): ConfigProblem | null {
  const server = config.smppServer;
  if (server === undefined || server.port === 0) return null;
  if (server.port === config.api.port) return { key: 'smppServer.port', what: `must differ from api.port (${config.api.port})` };
  if (config.admin !== undefined && server.port === config.admin.port) return { key: 'smppServer.port', what: `must differ from admin.port (${config.admin.port})` };
  return null;
}

/**
 * smppServer.tls's files can be read and make a certificate with its key, checked by `config
 * check` and when the gateway is built (not by the admin commands, which never listen: the
 * key file may be readable by the service user only). Null when there is no TLS to check.
 */
export function smppServerTlsProblem(config: Pick<SmsGateConfig, 'smppServer'>): ConfigProblem | null {
  const tls = config.smppServer?.tls;
  if (tls === undefined) return null;
  const read = (key: 'certFile' | 'keyFile'): { pem: Buffer } | ConfigProblem => {
    try {
      return { pem: readFileSync(tls[key]) };
    } catch (err) {
      return { key: `smppServer.tls.${key}`, what: `${tls[key]} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
    }
  };
  const cert = read('certFile');
  if (!('pem' in cert)) return cert;
  const key = read('keyFile');
  if (!('pem' in key)) return key;
  try {
    createSecureContext({ cert: cert.pem, key: key.pem });
  } catch (err) {
    return { key: 'smppServer.tls', what: `${tls.certFile} and ${tls.keyFile} are not a PEM certificate and its private key (${err instanceof Error ? err.message : String(err)})` };
  }
  return null;
}

function timeZoneProblem(config: SmsGateConfig): ConfigProblem | null {
  const zone = config.scheduling.timeZone;
  return isValidTimeZone(zone) ? null : { key: 'scheduling.timeZone', what: `"${zone}" is not an IANA time zone (e.g. Europe/Dublin)` };
}

/**
 * `npm start` on a fresh clone: the checkout's config/default.json, only when the working directory
 * is the package root of a source checkout (src/ is there; an installed package ships none).
 */
function sourceCheckoutDefault(): string | undefined {
  try {
    const root = packageRoot();
    if (realpathSync(process.cwd()) !== realpathSync(root)) return undefined;
    return existsSync(join(root, 'src', 'cli', 'main.ts')) && existsSync(join(root, DEFAULT_CONFIG_PATH)) ? DEFAULT_CONFIG_PATH : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every modem device's profile exists and is valid, checked when the config is loaded: `serve`
 * would refuse it when the transport starts, `config check` names the key and the known profiles.
 */
function modemProfileProblem(config: SmsGateConfig): ConfigProblem | null {
  for (const [t, transport] of config.transports.entries()) {
    // An entry an admin command left unchecked (src/config/index.ts ConfigPurpose) may be malformed.
    if (transport.type !== 'modem' || !Array.isArray(transport.devices)) continue;
    for (const [d, device] of transport.devices.entries()) {
      const name = device.profile ?? 'generic';
      try {
        loadProfile(name, transport.profilesDir);
      } catch (err) {
        if (!isGatewayError(err)) throw err;
        const key = `transports[${t}].devices[${d}].profile`;
        if (err.code !== 'MODEM_PROFILE_UNKNOWN') return { key, what: err.message };
        const known = (transport.profilesDir === undefined ? knownProfiles() : knownProfiles(transport.profilesDir)).join(', ') || 'none';
        const where = transport.profilesDir === undefined ? '' : ` in ${transport.profilesDir}`;
        return { key, what: `unknown modem profile "${name}"${where} (known: ${known})` };
      }
    }
  }
  return null;
}

const loader = createConfigLoader<SmsGateConfig>({
  transports: TRANSPORT_MODULES,
  defaultTransports: [{ name: 'sim', type: 'simulator' }],
  // In this order after `routes`: ajv reports the first error in schema order.
  sections: {
    engine: engineSchema,
    webhooks: webhooksSchema,
    logging: loggingSchema,
    processing: processingSchema,
    // No default: without the section there is no admin listener.
    admin: adminConfigSchema,
    numbering: numberingSchema,
    scheduling: schedulingSchema,
    inbound: inboundSchema,
    pricing: pricingSchema,
    credits: creditsSchema,
    // No default: without the section there is no SMPP server.
    smppServer: smppServerSchema(SMPP_SERVER_DEFAULTS),
  },
  checks: [adminProblem, smppServerProblem, timeZoneProblem, modemProfileProblem, (config) => pricingProblem(config.pricing)],
  complete: (config) => {
    config.database.keyFile ??= defaultKeyFileFor(config.database.path);
  },
  pathKeys: [
    ['transports', '*', 'profilesDir'],
    ['smppServer', 'tls', 'certFile'],
    ['smppServer', 'tls', 'keyFile'],
  ],
  search: { sourceCheckoutDefault },
});

/**
 * `path`, else the search order (src/config/locate.ts); every failure a CONFIG_INVALID naming file
 * and key. Relative paths resolve against the file's directory.
 */
export const loadConfig = loader.loadConfig;
/** The file loadConfig would read: `path`, else the search order. */
export const locateConfig = loader.locateConfig;
/** The JSON Schema published as config/smsgate.schema.json. */
export const configJsonSchema = loader.publishedSchema;
/** Validates an already parsed config (for tests and embedding); `sourceName` prefixes every error. */
export const resolveConfigFromObject = loader.resolveConfigFromObject;

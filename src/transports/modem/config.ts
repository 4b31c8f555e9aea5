/**
 * Configuration of a modem transport: a pool of devices, each with a profile from hardware/.
 */
export interface ModemDeviceConfig {
  /** Serial device, e.g. /dev/smsgate-modem0 (see hardware/99-smsgate-modems.rules). */
  path: string;
  /** Short name used in message ids and logs; defaults to the path's last segment. */
  name?: string;
  /** Profile in hardware/<profile>.json; default 'generic'. */
  profile?: string;
  /** Overrides the profile's baud rate. */
  baudRate?: number;
  /** SIM PIN, sent with AT+CPIN only when the SIM asks for it. Never logged. */
  pin?: string;
  /** SMSC number (with '+' for international) set with AT+CSCA; omitted means the SIM's. */
  smsc?: string;
  /** Overrides the profile's rate limit. */
  messagesPerMinute?: number;
  /**
   * The SIM's own number: the To of messages this device receives, which `smsgate inbound route
   * add --to` matches. Omitted, the To is the device's name.
   */
  number?: string;
}

export interface ModemTransportConfig {
  name: string;
  type: 'modem';
  devices: ModemDeviceConfig[];
  /** Request status reports (TP-SRR) and turn them into receipts. Default true. */
  statusReports?: boolean;
  /** How long a (TP-MR, recipient) -> messageId entry waits for its status report. Default 72 h. */
  receiptMatchWindowMs?: number;
  /** How long init waits for +CREG/+CEREG 1 or 5. Default 60 s. */
  registrationTimeoutMs?: number;
  /** Signal / registration / operator polling interval. Default 60 s. */
  healthIntervalMs?: number;
  /** Delays between reopen attempts after a device drops; the last one repeats. Default 1, 2, 5, 10, 30 s. */
  reopenBackoffMs?: number[];
  /**
   * Accepted for old configs and unused: the engine alone counts attempts (engine.maxAttempts); a
   * temporary +CMS error is reported after one send.
   */
  maxAttemptsPerPart?: number;
  /** Wait before a part that failed temporarily is tried again. Default 2 s. */
  retryDelayMs?: number;
  /** Relative TP-VP in minutes. Default 1440 (24 h). */
  validityMinutes?: number;
  /** Where profiles are read from; default <package root>/hardware. */
  profilesDir?: string;
}

export type ResolvedModemTransportConfig = Required<Omit<ModemTransportConfig, 'profilesDir'>> & { profilesDir: string | undefined };

export const MODEM_DEFAULTS = {
  statusReports: true,
  receiptMatchWindowMs: 72 * 3600_000,
  registrationTimeoutMs: 60_000,
  healthIntervalMs: 60_000,
  reopenBackoffMs: [1_000, 2_000, 5_000, 10_000, 30_000],
  maxAttemptsPerPart: 3,
  retryDelayMs: 2_000,
  validityMinutes: 24 * 60,
} as const;

export function withModemDefaults(config: ModemTransportConfig): ResolvedModemTransportConfig {
  return {
    name: config.name,
    type: 'modem',
    devices: config.devices.map((d) => ({ ...d })),
    statusReports: config.statusReports ?? MODEM_DEFAULTS.statusReports,
    receiptMatchWindowMs: config.receiptMatchWindowMs ?? MODEM_DEFAULTS.receiptMatchWindowMs,
    registrationTimeoutMs: config.registrationTimeoutMs ?? MODEM_DEFAULTS.registrationTimeoutMs,
    healthIntervalMs: config.healthIntervalMs ?? MODEM_DEFAULTS.healthIntervalMs,
    reopenBackoffMs: config.reopenBackoffMs ?? [...MODEM_DEFAULTS.reopenBackoffMs],
    maxAttemptsPerPart: config.maxAttemptsPerPart ?? MODEM_DEFAULTS.maxAttemptsPerPart,
    retryDelayMs: config.retryDelayMs ?? MODEM_DEFAULTS.retryDelayMs,
    validityMinutes: config.validityMinutes ?? MODEM_DEFAULTS.validityMinutes,
    profilesDir: config.profilesDir,
  };
}

/** The device's name: configured, else the last path segment (ttyUSB0, smsgate-modem0). */
export function deviceName(device: ModemDeviceConfig): string {
  return device.name ?? device.path.split('/').pop() ?? device.path;
}

/**
 * JSON schema of one modem transport entry, for the config module's ajv (draft-07 keywords only).
 * Unknown keys are rejected so a misspelt option is an error that names the key.
 */
export const MODEM_TRANSPORT_SCHEMA = {
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
          path: { type: 'string', minLength: 1 },
          name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' },
          profile: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$' },
          baudRate: { type: 'integer', minimum: 1 },
          pin: { type: 'string', pattern: '^[0-9]{4,8}$' },
          smsc: { type: 'string', pattern: '^\\+?[0-9]{1,20}$' },
          messagesPerMinute: { type: 'integer', minimum: 1 },
          number: { type: 'string', pattern: '^\\+?[0-9]{1,20}$' },
        },
      },
    },
    statusReports: { type: 'boolean' },
    receiptMatchWindowMs: { type: 'integer', minimum: 1 },
    registrationTimeoutMs: { type: 'integer', minimum: 1 },
    healthIntervalMs: { type: 'integer', minimum: 1 },
    reopenBackoffMs: { type: 'array', minItems: 1, items: { type: 'integer', minimum: 1 } },
    maxAttemptsPerPart: { type: 'integer', minimum: 1 },
    retryDelayMs: { type: 'integer', minimum: 0 },
    // 3GPP TS 23.040 §9.2.3.12.1: relative TP-VP spans 5 minutes to 63 weeks.
    validityMinutes: { type: 'integer', minimum: 5, maximum: 635040 },
    profilesDir: { type: 'string', minLength: 1 },
  },
} as const;

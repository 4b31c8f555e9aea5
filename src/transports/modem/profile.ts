/**
 * Modem profiles: per device family data (init commands, +CNMI settings, whether +CDS needs
 * +CNMA, baud rate, rate limit, quirks with their sources), kept as JSON files in hardware/ so a
 * new device is a data change, not a code change (Kannel's modems.conf idea).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { GatewayError } from '../../common/errors.js';

export interface ModemQuirk {
  id: string;
  description: string;
  /** Where the quirk is documented: datasheet / AT manual section or a public issue. */
  source: string;
}

export interface ModemProfile {
  name: string;
  description: string;
  baudRate: number;
  messagesPerMinute: number;
  /** AT+CMEE mode: 1 numeric, 2 verbose (both are parsed). */
  cmee: 1 | 2;
  /** Vendor commands sent after ATE0 / AT+CMEE, before the SIM check. */
  initCommands: string[];
  /** Registration status commands polled until one reports 1 (home) or 5 (roaming). */
  registrationCommands: ('+CREG' | '+CEREG' | '+CGREG')[];
  /** AT+CSMS=<service>, or null to leave it. */
  csms: 0 | 1 | null;
  /** AT+CNMI=<mode>,<mt>,<bm>,<ds>,<bfr> (TS 27.005 §3.4.1). */
  cnmi: string;
  /** How status reports arrive: 'cds' (<ds>=1, the PDU in the URC) or 'cdsi' (<ds>=2, stored, index in the URC). */
  statusReportDelivery: 'cds' | 'cdsi';
  /** Whether +CDS and +CMT must be acknowledged with AT+CNMA (TS 27.005 §3.4.4; needed with +CSMS service 1). */
  cnmaRequired: boolean;
  /** AT+CPMS storage for read/write/receive, or null to leave the default. */
  messageStorage: 'SM' | 'ME' | 'MT' | null;
  timeouts: { commandMs: number; promptMs: number; submitMs: number };
  quirks: ModemQuirk[];
}

const PROFILE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'name', 'description', 'baudRate', 'messagesPerMinute', 'cmee', 'initCommands', 'registrationCommands', 'csms', 'cnmi',
    'statusReportDelivery', 'cnmaRequired', 'messageStorage', 'timeouts', 'quirks',
  ],
  properties: {
    name: { type: 'string', pattern: '^[a-z0-9-]+$' },
    description: { type: 'string' },
    baudRate: { type: 'integer', enum: [9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600] },
    messagesPerMinute: { type: 'number', exclusiveMinimum: 0, maximum: 600 },
    cmee: { enum: [1, 2] },
    initCommands: { type: 'array', items: { type: 'string', pattern: '^AT' } },
    registrationCommands: { type: 'array', minItems: 1, items: { enum: ['+CREG', '+CEREG', '+CGREG'] } },
    csms: { enum: [0, 1, null] },
    cnmi: { type: 'string', pattern: '^[0-3](,[0-3]?){0,4}$' },
    statusReportDelivery: { enum: ['cds', 'cdsi'] },
    cnmaRequired: { type: 'boolean' },
    messageStorage: { enum: ['SM', 'ME', 'MT', null] },
    timeouts: {
      type: 'object',
      additionalProperties: false,
      required: ['commandMs', 'promptMs', 'submitMs'],
      properties: {
        commandMs: { type: 'integer', minimum: 100 },
        promptMs: { type: 'integer', minimum: 100 },
        submitMs: { type: 'integer', minimum: 100 },
      },
    },
    quirks: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'description', 'source'],
        properties: { id: { type: 'string' }, description: { type: 'string' }, source: { type: 'string', minLength: 1 } },
      },
    },
  },
} as const;

const ajv = new Ajv({ allErrors: true });
const validateProfile = ajv.compile<ModemProfile>(PROFILE_SCHEMA);

/** The package root (where package.json is), found from this module's own location, not the cwd. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (pkg.name === 'smsgate') return dir;
    } catch {
      // not here; keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) throw new GatewayError('MODEM_PROFILE_DIR', 'cannot find the smsgate package root to load hardware/ profiles');
    dir = parent;
  }
}

export function defaultProfilesDir(): string {
  return join(packageRoot(), 'hardware');
}

/** Checks parsed JSON against the profile schema; the error names the file and the key. */
export function parseProfile(json: unknown, file: string): ModemProfile {
  if (!validateProfile(json)) {
    const first = validateProfile.errors?.[0];
    const key = first === undefined ? '' : first.instancePath || `/${String((first.params as { missingProperty?: string }).missingProperty ?? '')}`;
    throw new GatewayError('MODEM_PROFILE_INVALID', `${file}: ${key} ${first?.message ?? 'is invalid'}`, {
      details: { file, key, errors: validateProfile.errors?.map((e) => `${e.instancePath} ${e.message ?? ''}`) },
    });
  }
  return json;
}

export function loadProfile(name: string, profilesDir: string = defaultProfilesDir()): ModemProfile {
  if (!/^[a-z0-9-]+$/.test(name)) throw new GatewayError('MODEM_PROFILE_UNKNOWN', `'${name}' is not a profile name`, { details: { name } });
  const file = join(profilesDir, `${name}.json`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new GatewayError('MODEM_PROFILE_UNKNOWN', `no modem profile '${name}' (${file})`, { details: { name, file } });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new GatewayError('MODEM_PROFILE_INVALID', `${file}: not JSON (${err instanceof Error ? err.message : String(err)})`, { details: { file } });
  }
  const profile = parseProfile(json, file);
  if (profile.name !== name) throw new GatewayError('MODEM_PROFILE_INVALID', `${file}: /name is '${profile.name}', expected '${name}'`, { details: { file, key: '/name' } });
  return profile;
}

/** The profile names a directory holds (its `<name>.json` files), sorted; none when it cannot be read. */
export function knownProfiles(profilesDir: string = defaultProfilesDir()): string[] {
  try {
    return readdirSync(profilesDir).filter((file) => /^[a-z0-9-]+\.json$/.test(file)).map((file) => file.slice(0, -'.json'.length)).sort();
  } catch {
    return [];
  }
}

/** Reads the <ds> field of a +CNMI setting. */
export function cnmiDs(cnmi: string): number {
  return Number(cnmi.split(',')[3] ?? '0') || 0;
}

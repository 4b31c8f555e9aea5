/**
 * Loads the JSON config file: environment interpolation, ajv validation with defaults, then the
 * rules a schema cannot say (unique transport names, routes naming a configured transport).
 * Every failure is a GatewayError('CONFIG_INVALID') whose message names the file and the key, e.g.
 * `config/prod.json: transports[1].port: must be <= 65535`.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { adminConfigProblem } from '../admin/admin-config.js';
import { isValidTimeZone } from '../campaigns/send-at.js';
import { GatewayError } from '../errors.js';
import { defaultKeyFileFor } from '../store/secret-box.js';
import { interpolateEnv, type Environment } from './interpolate.js';
import { formatJsonPath, parseInstancePath, type JsonPath } from './json-path.js';
import { TRANSPORT_SCHEMAS, configSchema } from './schema.js';
import type { RouteConfig, SmsGateConfig, TransportEntry, TransportType } from './types.js';

export type * from './types.js';
export type { Environment } from './interpolate.js';

export const DEFAULT_CONFIG_PATH = 'config/default.json';

/** `path`, else $SMSGATE_CONFIG, else config/default.json (relative to the working directory). */
export function configPathFrom(path: string | undefined, env: Environment = process.env): string {
  return path ?? env['SMSGATE_CONFIG'] ?? DEFAULT_CONFIG_PATH;
}

export function loadConfig(path?: string, env: Environment = process.env): SmsGateConfig {
  const file = configPathFrom(path, env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    const reason = (cause as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : 'cannot be read';
    throw new GatewayError('CONFIG_INVALID', `${file}: ${reason}`, { cause });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new GatewayError('CONFIG_INVALID', `${file}: not valid JSON: ${(cause as Error).message}`, { cause });
  }
  return resolveConfigFromObject(parsed, file, env);
}

/** Validates an already parsed config (for tests and embedding); `sourceName` prefixes every error. */
export function resolveConfigFromObject(input: unknown, sourceName: string, env: Environment = process.env): SmsGateConfig {
  const candidate = interpolateEnv(input, env, sourceName);
  const validators = getValidators();
  if (!validators.config(candidate)) throw invalid(sourceName, [], validators.config.errors);
  const config = candidate as Omit<SmsGateConfig, 'routes'> & { routes?: RouteConfig[] };
  config.transports.forEach((entry, index) => {
    const validate = validators.transports[entry.type];
    if (!validate(entry)) throw invalid(sourceName, ['transports', index], validate.errors);
  });
  checkTransportNames(config.transports, sourceName);
  // Omitted routes send everything through the first transport; the README says so.
  const routes = config.routes ?? [{ prefix: '', transport: (config.transports[0] as TransportEntry).name }];
  checkRoutes(routes, config.transports, sourceName);
  const adminProblem = config.admin === undefined ? null : adminConfigProblem(config.admin, config.api.port);
  if (adminProblem !== null) throw new GatewayError('CONFIG_INVALID', `${sourceName}: ${adminProblem.key}: ${adminProblem.what}`, { details: { path: adminProblem.key } });
  if (!isValidTimeZone(config.scheduling.timeZone)) {
    fail(sourceName, ['scheduling', 'timeZone'], `"${config.scheduling.timeZone}" is not an IANA time zone (e.g. Europe/Dublin)`);
  }
  config.database.keyFile ??= defaultKeyFileFor(config.database.path);
  return { ...config, routes };
}

function checkTransportNames(transports: readonly TransportEntry[], sourceName: string): void {
  const seen = new Set<string>();
  transports.forEach((entry, index) => {
    if (seen.has(entry.name)) fail(sourceName, ['transports', index, 'name'], `duplicate transport name "${entry.name}"`);
    seen.add(entry.name);
  });
}

function checkRoutes(routes: readonly RouteConfig[], transports: readonly TransportEntry[], sourceName: string): void {
  const names = new Set(transports.map((t) => t.name));
  const prefixes = new Set<string>();
  routes.forEach((route, index) => {
    if (!names.has(route.transport)) {
      fail(sourceName, ['routes', index, 'transport'], `no transport named "${route.transport}" (configured: ${[...names].join(', ')})`);
    }
    if (prefixes.has(route.prefix)) fail(sourceName, ['routes', index, 'prefix'], `duplicate route prefix "${route.prefix}"`);
    prefixes.add(route.prefix);
  });
}

function fail(sourceName: string, path: JsonPath, what: string): never {
  throw new GatewayError('CONFIG_INVALID', `${sourceName}: ${formatJsonPath(path)}: ${what}`, { details: { path: formatJsonPath(path) } });
}

function invalid(sourceName: string, basePath: JsonPath, errors: ErrorObject[] | null | undefined): GatewayError {
  const error = errors?.[0];
  if (error === undefined) return new GatewayError('CONFIG_INVALID', `${sourceName}: invalid`);
  const path: (string | number)[] = [...basePath, ...parseInstancePath(error.instancePath)];
  let what = error.message ?? 'is invalid';
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') {
    path.push(String(params['additionalProperty']));
    what = 'unknown key';
  } else if (error.keyword === 'required') {
    path.push(String(params['missingProperty']));
    what = 'is required';
  } else if (error.keyword === 'enum') {
    what = `must be one of ${(params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  } else if (error.keyword === 'const') {
    what = `must be ${JSON.stringify(params['allowedValue'])}`;
  }
  const pathText = formatJsonPath(path);
  return new GatewayError('CONFIG_INVALID', `${sourceName}: ${pathText}: ${what}`, { details: { path: pathText, keyword: error.keyword } });
}

interface Validators {
  config: ValidateFunction;
  transports: Record<TransportType, ValidateFunction>;
}

let compiled: Validators | undefined;

function getValidators(): Validators {
  if (compiled === undefined) {
    // useDefaults fills omitted keys in place; strict mode rejects mistakes in the schemas themselves.
    const ajv = new Ajv({ useDefaults: true, strict: true, allErrors: false });
    compiled = {
      config: ajv.compile(configSchema),
      transports: {
        simulator: ajv.compile(TRANSPORT_SCHEMAS.simulator),
        smpp: ajv.compile(TRANSPORT_SCHEMAS.smpp),
        modem: ajv.compile(TRANSPORT_SCHEMAS.modem),
      },
    };
  }
  return compiled;
}

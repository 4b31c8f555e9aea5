/**
 * Loads the JSON config file: environment interpolation, ajv validation with defaults, then the
 * rules a schema cannot say (unique transport names, routes naming a configured transport, and the
 * checks the composition root hands in). config/ knows no feature module: src/gateway/config.ts
 * builds the loader from the transport registry and the feature modules' sections.
 * Every failure is a GatewayError('CONFIG_INVALID') whose message names the file and the key, e.g.
 * `config/prod.json: transports[1].port: must be <= 65535`.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { GatewayError } from '../common/errors.js';
import { databaseProblem, DEFAULT_DATABASE_PATH, noteKeyFileNotGiven } from './database.js';
import { interpolateEnv, type Environment } from './interpolate.js';
import { describeJsonSyntaxError } from './json-text.js';
import { formatJsonPath, parseInstancePath, type JsonPath } from './json-path.js';
import { configPathFrom, type ConfigSearch } from './locate.js';
import { CORE_PATH_KEYS, resolveRelativePaths, type PathKey } from './relative-paths.js';
import { buildConfigSchema, buildPublishedSchema, type ConfigSchemaParts } from './schema.js';
import { routeProblem } from './routes.js';
import { nearestKey } from './suggest.js';
import type { ConfigCore, ConfigProblem, RouteConfig } from './types.js';

export type * from './types.js';
export * from './schema.js';
export * from './database.js';
export * from './locate.js';
export type { Environment } from './interpolate.js';
export type { PathKey } from './relative-paths.js';

/** The source checkout's own config, which `npm start` serves with (src/config/locate.ts). */
export const DEFAULT_CONFIG_PATH = 'config/default.json';

/**
 * Which `${ENV}` variables a command needs. `serve` (and `config check`, which says what serve would
 * do) needs them all; the admin commands (migrate, client, user, token, ...) never open a
 * transport, so an unset variable in a transport entry's own keys (an SMPP password, a SIM PIN) is
 * no error for them: it stays as written and that entry is checked for its `name` and `type` only.
 */
export type ConfigPurpose = 'serve' | 'admin';

export interface LoadOptions {
  purpose?: ConfigPurpose;
}

export interface ResolveOptions extends LoadOptions {
  /** The directory relative paths resolve against (the config file's); left out, they stay as written. */
  baseDir?: string;
}

/** What the composition root hands config/: the parts of the schema it does not own, and rules. */
export interface ConfigSpec<Config extends ConfigCore> extends Omit<ConfigSchemaParts, 'transportTypes'> {
  /** Each transport type's entry schema, checked after the common part. */
  transports: readonly { type: string; schema: object }[];
  /** Rules a schema cannot say, run in order after the transport and route rules. */
  checks: readonly ((config: Config) => ConfigProblem | null)[];
  /** Fills keys whose defaults derive from others (e.g. database.keyFile), after every check. */
  complete(config: Config): void;
  /** The features' keys holding paths, beside config/'s own (CORE_PATH_KEYS). */
  pathKeys?: readonly PathKey[];
  /** Where a command looks for its config when not told (src/config/locate.ts). */
  search?: ConfigSearch;
}

export interface ConfigLoader<Config> {
  loadConfig(path?: string, env?: Environment, options?: LoadOptions): Config;
  /** Validates an already parsed config (for tests and embedding); `sourceName` prefixes every error. */
  resolveConfigFromObject(input: unknown, sourceName: string, env?: Environment, options?: ResolveOptions): Config;
  /** The file a command reads: `path`, else the search order of src/config/locate.ts. */
  locateConfig(path?: string, env?: Environment): string;
  /** The JSON Schema of the whole file, transports' own keys included, as config/smsgate.schema.json publishes it. */
  publishedSchema(): object;
}

export function createConfigLoader<Config extends ConfigCore>(spec: ConfigSpec<Config>): ConfigLoader<Config> {
  let compiled: Validators | undefined;
  // Compiled once, on first use.
  const validators = (): Validators => (compiled ??= compileValidators(spec));

  function resolveConfigFromObject(input: unknown, sourceName: string, env: Environment = process.env, options: ResolveOptions = {}): Config {
    // An admin command keeps a transport's unset variables as written, and skips that entry's own
    // schema (a placeholder is no valid PIN): serve and config check still check the whole entry.
    const unchecked = new Set<number>();
    const keepUnset = (path: JsonPath): boolean => {
      if (options.purpose !== 'admin' || !isTransportOwnKey(path)) return false;
      unchecked.add(path[1] as number);
      return true;
    };
    const candidate = interpolateEnv(input, env, sourceName, [], keepUnset);
    const { config: validateConfig, transports } = validators();
    if (!validateConfig(candidate)) throw invalid(sourceName, [], validateConfig.errors);
    const config = candidate as Omit<Config, 'routes'> & { routes?: RouteConfig[] };
    checkDatabase(config.database as { path?: string; url?: string }, sourceName);
    config.transports.forEach((entry, index) => {
      if (unchecked.has(index)) return;
      const validate = transports.get(entry.type) as ValidateFunction;
      if (!validate(entry)) throw invalid(sourceName, ['transports', index], validate.errors);
    });
    checkTransportNames(config.transports, sourceName);
    // Omitted routes send everything through the first transport; the README says so.
    const routes = config.routes ?? [{ prefix: '', transport: (config.transports[0] as ConfigCore['transports'][number]).name }];
    checkRoutes(routes, config.transports, sourceName);
    const resolved = { ...config, routes } as Config;
    // Before the checks (a modem's profilesDir is read by one) and complete() (keyFile's default follows database.path).
    if (options.baseDir !== undefined) resolveRelativePaths(resolved, [...CORE_PATH_KEYS, ...(spec.pathKeys ?? [])], options.baseDir);
    for (const check of spec.checks) {
      const problem = check(resolved);
      if (problem !== null) throw new GatewayError('CONFIG_INVALID', `${sourceName}: ${problem.key}: ${problem.what}`, { details: { path: problem.key } });
    }
    // keyFile is still as the file gave it: complete() fills in its default.
    const { database } = resolved;
    if (database.url !== undefined && (database.keyFile as string | undefined) === undefined) noteKeyFileNotGiven(database, sourceName);
    spec.complete(resolved);
    return resolved;
  }

  function locateConfig(path?: string, env: Environment = process.env): string {
    return configPathFrom(path, env, spec.search);
  }

  function loadConfig(path?: string, env: Environment = process.env, options: LoadOptions = {}): Config {
    const file = locateConfig(path, env);
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
      throw new GatewayError('CONFIG_INVALID', `${file}: not valid JSON: ${describeJsonSyntaxError(text, cause as Error)}`, { cause });
    }
    return resolveConfigFromObject(parsed, file, env, { ...options, baseDir: dirname(resolve(file)) });
  }

  function publishedSchema(): object {
    return buildPublishedSchema({ transportTypes: spec.transports.map((t) => t.type), defaultTransports: spec.defaultTransports, sections: spec.sections }, spec.transports);
  }

  return { loadConfig, resolveConfigFromObject, locateConfig, publishedSchema };
}

/** path xor url (src/config/database.ts); an omitted path is the default SQLite file, also beside a url (key file). */
function checkDatabase(database: { path?: string; url?: string }, sourceName: string): void {
  const problem = databaseProblem(database);
  if (problem !== null) fail(sourceName, problem.key.split('.'), problem.what);
  database.path ??= DEFAULT_DATABASE_PATH;
}

function checkTransportNames(transports: readonly { name: string }[], sourceName: string): void {
  const seen = new Set<string>();
  transports.forEach((entry, index) => {
    if (seen.has(entry.name)) fail(sourceName, ['transports', index, 'name'], `duplicate transport name "${entry.name}"`);
    seen.add(entry.name);
  });
}

function checkRoutes(routes: readonly RouteConfig[], transports: readonly { name: string }[], sourceName: string): void {
  const problem = routeProblem(routes, transports.map((t) => t.name));
  if (problem !== null) fail(sourceName, problem.path, problem.what);
}

/** A transport entry's own keys (`transports[0].password`), not its `name` or `type`. */
function isTransportOwnKey(path: JsonPath): boolean {
  return path.length >= 3 && path[0] === 'transports' && path[2] !== 'name' && path[2] !== 'type';
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
    const key = String(params['additionalProperty']);
    path.push(key);
    const known = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
    const suggestion = nearestKey(key, known);
    const pointer = `/${[...basePath, ...parseInstancePath(error.instancePath)].join('/')}`;
    what = `unknown key ${JSON.stringify(key)} at ${pointer}${suggestion === undefined ? '' : `: did you mean ${JSON.stringify(suggestion)}?`}`;
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
  transports: ReadonlyMap<string, ValidateFunction>;
}

function compileValidators(spec: Pick<ConfigSpec<ConfigCore>, 'transports' | 'defaultTransports' | 'sections'>): Validators {
  // useDefaults fills omitted keys in place; strict mode rejects mistakes in the schemas themselves.
  // verbose: an error carries its schema, whose known keys an unknown key's suggestion is picked from.
  const ajv = new Ajv({ useDefaults: true, strict: true, allErrors: false, verbose: true });
  const transportTypes = spec.transports.map((t) => t.type);
  return {
    config: ajv.compile(buildConfigSchema({ transportTypes, defaultTransports: spec.defaultTransports, sections: spec.sections })),
    transports: new Map(spec.transports.map((t) => [t.type, ajv.compile(t.schema)])),
  };
}

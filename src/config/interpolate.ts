/**
 * `${NAME}` interpolation of environment variables into every string of the parsed config, so
 * secrets (SMPP passwords, SIM PINs) stay out of the file. `${NAME:-fallback}` gives a value for an
 * unset or empty variable; `$${` writes a literal `${`. Only strings are interpolated: a number or
 * boolean setting is written as a JSON number or boolean.
 */
import { GatewayError } from '../common/errors.js';
import { formatJsonPath, type JsonPath } from './json-path.js';

const PLACEHOLDER = /\$(\$?)\{([^}]*)\}/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Returns a copy of `value` with every placeholder replaced; throws CONFIG_INVALID naming the key.
 * An unset variable in a key `keepUnset` accepts (one the command does not use) stays as written,
 * `${NAME}`, and `keepUnset` is told of it.
 */
export function interpolateEnv(value: unknown, env: Environment, sourceName: string, path: JsonPath = [], keepUnset?: (path: JsonPath) => boolean): unknown {
  if (typeof value === 'string') return interpolateString(value, env, sourceName, path, keepUnset);
  if (Array.isArray(value)) return value.map((item, index) => interpolateEnv(item, env, sourceName, [...path, index], keepUnset));
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = interpolateEnv(item, env, sourceName, [...path, key], keepUnset);
    return copy;
  }
  return value;
}

function interpolateString(text: string, env: Environment, sourceName: string, path: JsonPath, keepUnset?: (path: JsonPath) => boolean): string {
  return text.replace(PLACEHOLDER, (match: string, escape: string, body: string) => {
    if (escape === '$') return `\${${body}}`;
    const separator = body.indexOf(':-');
    const name = separator === -1 ? body : body.slice(0, separator);
    const fallback = separator === -1 ? undefined : body.slice(separator + 2);
    const fail = (what: string): never => {
      throw new GatewayError('CONFIG_INVALID', `${sourceName}: ${formatJsonPath(path)}: ${what}`, { details: { path: formatJsonPath(path) } });
    };
    if (!VARIABLE_NAME.test(name)) fail(`"\${${body}}" is not a valid environment variable reference`);
    const found = env[name];
    if (found !== undefined && (found !== '' || fallback === undefined)) return found;
    if (fallback !== undefined) return fallback;
    if (keepUnset?.(path) === true) return match;
    return fail(`environment variable ${name} is not set`);
  });
}

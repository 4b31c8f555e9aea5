/**
 * The `admin` config section: the admin listener's address and, when it is bound beyond
 * loopback, the bearer token every request must carry. Without the section there is no listener.
 */

export interface AdminConfig {
  host: string;
  /** Never the API port; 0 picks a free port (tests). */
  port: number;
  /** Required when host is not a loopback address; may be `${ENV}`. Never logged. */
  token?: string;
  /**
   * Host names (or IP literals) besides its own address that requests may name in their Host
   * header, e.g. the name a reverse proxy forwards or a DNS name of this machine. Default [].
   */
  allowedHosts?: readonly string[];
}

export const ADMIN_DEFAULTS = { host: '127.0.0.1', port: 8081 } as const;

/** A token shorter than this is refused: it guards process metrics and a replay button. */
export const MIN_ADMIN_TOKEN_CHARS = 16;

export const adminConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    host: { type: 'string', minLength: 1, default: ADMIN_DEFAULTS.host },
    port: { type: 'integer', minimum: 0, maximum: 65535, default: ADMIN_DEFAULTS.port },
    token: { type: 'string', minLength: MIN_ADMIN_TOKEN_CHARS },
    // A name as it appears in a Host header, without a port: letters, digits, dots, hyphens, or an IP literal.
    allowedHosts: { type: 'array', items: { type: 'string', pattern: '^([A-Za-z0-9_.-]+|\\[[0-9A-Fa-f:.]+\\]|[0-9A-Fa-f:.]+)$' }, default: [] },
  },
} as const;

/** 127.0.0.0/8, ::1 and localhost: reachable only from this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1' || bare === '0:0:0:0:0:0:0:1') return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare)) return true;
  return /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/** A rule the schema cannot say, as the key it concerns and what is wrong; null when the section is sound. */
export function adminConfigProblem(admin: AdminConfig, apiPort: number): { key: string; what: string } | null {
  if (!isLoopbackHost(admin.host) && admin.token === undefined) {
    return { key: 'admin.token', what: `is required when admin.host ("${admin.host}") is not a loopback address` };
  }
  if (admin.port !== 0 && admin.port === apiPort) {
    return { key: 'admin.port', what: `must differ from api.port (${apiPort}): the admin listener is never on the public API port` };
  }
  return null;
}

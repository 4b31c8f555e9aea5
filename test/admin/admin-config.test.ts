/**
 * The `admin` config section: off without it, loopback by default, and a non-loopback
 * host without admin.token is a config error naming the key and the file.
 */
import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../src/admin/admin-config.js';
import { resolveConfigFromObject } from '../../src/gateway/config.js';

describe('admin config', () => {
  it('is off without the section and defaults to 127.0.0.1:8081 with it', () => {
    expect(resolveConfigFromObject({}, 'a.json', {}).admin).toBeUndefined();
    expect(resolveConfigFromObject({ admin: {} }, 'a.json', {}).admin).toEqual({ host: '127.0.0.1', port: 8081, allowedHosts: [] });
  });

  it('refuses a non-loopback host without a token, naming admin.token and the file', () => {
    expect(() => resolveConfigFromObject({ admin: { host: '0.0.0.0', port: 8081 } }, 'prod.json', {})).toThrow(
      /^prod\.json: admin\.token: is required when admin\.host \("0\.0\.0\.0"\) is not a loopback address$/,
    );
  });

  it('takes a non-loopback host with a token, which may come from the environment', () => {
    const config = resolveConfigFromObject({ admin: { host: '0.0.0.0', port: 8081, token: '${ADMIN_TOKEN}' } }, 'prod.json', { ADMIN_TOKEN: 'a-long-admin-token-1234' });
    expect(config.admin).toEqual({ host: '0.0.0.0', port: 8081, token: 'a-long-admin-token-1234', allowedHosts: [] });
  });

  it('refuses a short token and the API port, naming the key', () => {
    expect(() => resolveConfigFromObject({ admin: { token: 'short' } }, 'c.json', {})).toThrow(/^c\.json: admin\.token: must NOT have fewer than 16 characters$/);
    expect(() => resolveConfigFromObject({ api: { port: 9000 }, admin: { port: 9000 } }, 'c.json', {})).toThrow(/^c\.json: admin\.port: must differ from api\.port \(9000\)/);
    expect(() => resolveConfigFromObject({ admin: { hots: 'x' } }, 'c.json', {})).toThrow(/^c\.json: admin\.hots: unknown key "hots" at \/admin: did you mean "host"\?$/);
  });

  it('takes admin.allowedHosts as host names and refuses one with a port or a scheme, naming the entry', () => {
    expect(resolveConfigFromObject({ admin: { allowedHosts: ['status.example.org', '192.0.2.7', '[2001:db8::1]'] } }, 'c.json', {}).admin?.allowedHosts)
      .toEqual(['status.example.org', '192.0.2.7', '[2001:db8::1]']);
    expect(() => resolveConfigFromObject({ admin: { allowedHosts: ['status.example.org:8081'] } }, 'c.json', {})).toThrow(/^c\.json: admin\.allowedHosts\[0\]: must match pattern/);
    expect(() => resolveConfigFromObject({ admin: { allowedHosts: ['ok.example', 'http://x.example'] } }, 'c.json', {})).toThrow(/^c\.json: admin\.allowedHosts\[1\]: must match pattern/);
    expect(() => resolveConfigFromObject({ admin: { allowedHosts: 'x.example' } }, 'c.json', {})).toThrow(/^c\.json: admin\.allowedHosts: must be array$/);
  });

  it('knows loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.5', 'example.org', '128.0.0.1']) expect(isLoopbackHost(host)).toBe(false);
  });
});

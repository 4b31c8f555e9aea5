/**
 * The logger's redaction (src/common/log.ts REDACTED_PATHS) for the shapes smsgate modules bind: a
 * secret-named field at the top of a log object or one level down (a config section, a request's
 * headers) is written as [redacted], never as its value.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/common/log.js';

function logOnce(fields: Record<string, unknown>): Record<string, unknown> {
  const destination = new PassThrough();
  let output = '';
  destination.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  createLogger({ level: 'info', destination }).info(fields, 'line');
  const lines = output.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string) as Record<string, unknown>;
}

describe('log redaction', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['an SMPP bind password', { password: 'smpp-pw-1' }, 'smpp-pw-1'],
    ['a transport section password', { transport: { name: 'smsc', password: 'smpp-pw-2' } }, 'smpp-pw-2'],
    ['a SIM PIN', { pin: '4711' }, '4711'],
    ['a device PIN', { device: { path: '/dev/ttyUSB0', pin: '8642' } }, '8642'],
    ['a webhook secret', { webhookSecret: 'whsec-1' }, 'whsec-1'],
    ['a client secret', { client: { name: 'acme', secret: 'whsec-2' } }, 'whsec-2'],
    ['a personal access token', { token: 'sgp_abc123' }, 'sgp_abc123'],
    ['an access token', { access_token: 'jwt.aaa.bbb' }, 'jwt.aaa.bbb'],
    ['a refresh token', { refresh_token: 'rt-ccc' }, 'rt-ccc'],
    ['a bearer header', { headers: { authorization: 'Bearer jwt.ddd.eee' } }, 'jwt.ddd.eee'],
    ['a request bearer header', { req: { headers: { authorization: 'Bearer jwt.fff.ggg' } } }, 'jwt.fff.ggg'],
    ['a password two levels down in a config', { config: { transports: [{ name: 'smsc', password: 'smpp-pw-3' }] } }, 'smpp-pw-3'],
    ['a PIN in a device list', { devices: [{ path: '/dev/ttyUSB1', pin: '1357' }] }, '1357'],
    ['a secret two objects down', { gateway: { client: { secret: 'whsec-3' } } }, 'whsec-3'],
  ])('writes %s as [redacted]', (_name, fields, secret) => {
    const line = logOnce(fields);
    expect(JSON.stringify(line)).not.toContain(secret);
    expect(JSON.stringify(line)).toContain('[redacted]');
  });

  it('leaves the fields around a secret as they were', () => {
    const line = logOnce({ transport: { name: 'smsc', password: 'x' }, clientId: 7 });
    expect(line).toMatchObject({ transport: { name: 'smsc', password: '[redacted]' }, clientId: 7, msg: 'line' });
  });
});

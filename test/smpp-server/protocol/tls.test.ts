import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/common/errors.js';
import type { SmppListener } from '../../../src/smpp-server/protocol/listener.js';
import { PackageCustomer, startTestListener, TestHandlers } from './helpers.js';

let dir: string;
let certFile: string;
let keyFile: string;
let listener: SmppListener | undefined;
const customers: PackageCustomer[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'smpp-server-tls-'));
  certFile = join(dir, 'cert.pem');
  keyFile = join(dir, 'key.pem');
  // A self-signed certificate for localhost, made for this run.
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

afterEach(async () => {
  for (const customer of customers.splice(0)) customer.close();
  await listener?.close();
  listener = undefined;
});

async function startRejection(tls: { certFile: string; keyFile: string }): Promise<GatewayError> {
  const err = await startTestListener(new TestHandlers(), { tls }).then(
    (started) => {
      listener = started;
      throw new Error('the listener started');
    },
    (reason: unknown) => reason,
  );
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

describe('smpp server over TLS', () => {
  it('binds and takes a submit_sm from a customer that verifies the certificate', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers, { tls: { certFile, keyFile } });
    const esme = await PackageCustomer.connect(listener.address.port, { ca: readFileSync(certFile) });
    customers.push(esme);
    const bind = await esme.bind('bind_transceiver');
    expect([bind.command_status, bind['system_id']]).toEqual([0, 'smsgate']);
    const submit = await esme.request('submit_sm', { destination_addr: '353871234567', data_coding: 0, short_message: Buffer.from('over tls') });
    expect([submit.command_status, submit['message_id']]).toEqual([0, 'm1']);
    expect(handlers.submits[0]!.fields.shortMessage.toString('latin1')).toBe('over tls');
  });

  it('a missing certificate file is CONFIG_INVALID naming smppServer.tls.certFile', async () => {
    const err = await startRejection({ certFile: join(dir, 'nope.pem'), keyFile });
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.details['key']).toBe('smppServer.tls.certFile');
    expect(err.message).toContain('smppServer.tls.certFile');
  });

  it('a missing key file is CONFIG_INVALID naming smppServer.tls.keyFile', async () => {
    const err = await startRejection({ certFile, keyFile: join(dir, 'nope.pem') });
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.details['key']).toBe('smppServer.tls.keyFile');
  });

  it('a file that is no PEM is CONFIG_INVALID naming smppServer.tls', async () => {
    const garbage = join(dir, 'garbage.pem');
    writeFileSync(garbage, 'not a certificate\n');
    const err = await startRejection({ certFile: garbage, keyFile });
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.details['key']).toBe('smppServer.tls');
  });
});

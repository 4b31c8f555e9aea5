/**
 * The library surface: createGateway(config, { transports }) with an injected simulator, accounts
 * made through gateway.auth, a campaign through the HTTP API, and the simulator's receipts turned
 * into the summary. stop() may be called twice.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createGateway, resolveConfigFromObject, SimulatorTransport } from '../../src/index.js';
import { baseUrlOf, getSummary, postCampaign, tempDir, until } from './e2e-setup.js';

const dir = tempDir('embedded');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('createGateway as a library', () => {
  it('runs a campaign through an injected transport and stops cleanly', async () => {
    const config = resolveConfigFromObject(
      { database: { path: join(dir, 'smsgate.sqlite') }, api: { host: '127.0.0.1', port: 0 }, routes: [{ prefix: '', transport: 'injected' }], transports: [{ name: 'injected', type: 'simulator' }] },
      'embedded test',
    );
    const simulator = new SimulatorTransport({ name: 'injected', type: 'simulator', receiptDelayMs: 10, maxPerSecond: 10_000 }, { recordAccepted: true });
    const gateway = await createGateway(config, { transports: [simulator] });
    expect(gateway.transports).toEqual([simulator]);
    await gateway.auth.createClient({ name: 'lib' });
    await gateway.auth.createUser({ clientName: 'lib', username: 'lib-admin', password: 'pw', isAdmin: true });
    await gateway.auth.addSender({ clientName: 'lib', sender: 'Lib', type: 0 });
    const token = await gateway.auth.createPersonalAccessToken('lib-admin');
    await gateway.start();
    try {
      const baseUrl = baseUrlOf(gateway);
      const { status, id } = await postCampaign(baseUrl, token, { text: 'From a library', from: 'Lib', recipientInfo: [{ msisdn: '353871111110' }, { msisdn: '353871111119' }] });
      expect(status).toBe(202);
      const summary = await until(() => getSummary(baseUrl, token, id), (s) => s?.pending === 0, 20_000, 'summary');
      // No outcome table configured: every number is delivered, whatever its last digit.
      expect(summary).toEqual({ totalSent: 2, delivered: 2, undelivered: 0, pending: 0 });
      expect(simulator.accepted.map((a) => a.destination).sort()).toEqual(['353871111110', '353871111119']);
    } finally {
      await gateway.stop();
      await gateway.stop();
    }
    expect(simulator.currentState().state).toBe('down');
  });
});

/**
 * The API, auth, campaigns and inbound work unchanged when every store call
 * answers a turn of the event loop later, as PostgreSQL's will (test/support/deferred-ports.ts over
 * a real SQLite file). Login with the password grant, a JWT on the campaign API, a campaign
 * accepted, processed with a suppressed number skipped and summarised, a multi-part inbound
 * message reassembled and listed: each step goes through the ports only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InboundAdmin } from '../../src/inbound/inbound-admin.js';
import { InboundService } from '../../src/inbound/inbound-service.js';
import { silentLogger } from '../../src/common/log.js';
import type { InboundMessage } from '../../src/transports/transport.js';
import { startApiFixture, FIXTURE_PASSWORD, type ApiFixture } from '../support/api-fixture.js';
import { deferredPorts } from '../support/deferred-ports.js';

let api: ApiFixture;
const calls = { count: 0 };

beforeAll(async () => {
  api = await startApiFixture({ wrapPorts: (ports) => deferredPorts(ports, calls) });
});
afterAll(async () => {
  await api.close();
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('consumers on ports that answer later', () => {
  it('log in, accept, process and summarise a campaign', async () => {
    await api.createAccount({ clientName: 'acme', username: 'alice', senders: [{ name: 'Acme', type: 0 }] });
    expect(calls.count).toBeGreaterThan(0);
    await new InboundAdmin(api.ports.inbound).addOptout('acme', '353861111111');

    const login = await fetch(`${api.baseUrl}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', client_id: 'messaging-api', username: 'alice', password: FIXTURE_PASSWORD }).toString(),
    });
    expect(login.status).toBe(200);
    const { access_token: jwt } = (await login.json()) as { access_token: string };

    const posted = await api.postCampaign(jwt, {
      text: 'Hello', from: 'Acme',
      recipientInfo: [{ msisdn: '0861111111' }, { msisdn: '0862222222' }, { msisdn: '0863333333' }],
    });
    expect(posted.status).toBe(202);
    const { id } = (await posted.json()) as { id: string };
    const summary = await until(
      async () => {
        const response = await api.getSummary(jwt, id);
        return { status: response.status, body: (await response.json()) as Record<string, number> };
      },
      (r) => r.status === 200,
      'the campaign to be ready',
    );
    // The suppressed number is skipped: two of three are accepted (SPEC "Campaign Summary" totalSent).
    expect(summary.body).toEqual({ totalSent: 2, delivered: 0, undelivered: 0, pending: 2 });
  });

  it('reassemble an inbound message from parts and list it on GET /v1/inbound', async () => {
    const { token } = await api.createAccount({ clientName: 'globex' });
    await new InboundAdmin(api.ports.inbound).addRoute('globex', '50999');
    const service = new InboundService({ store: api.ports.inbound, logger: silentLogger(), wakeWebhooks: () => undefined });
    const part = (sequence: number, text: string): InboundMessage => ({
      from: '0861234567', to: '50999', text, receivedAt: '', raw: text, concat: { scheme: 'udh8', reference: 9, total: 2, sequence },
    });
    expect(await service.receive('sim', part(2, 'world'))).toEqual({ kind: 'part-stored', stored: 1, total: 2 });
    expect(await service.receive('sim', part(1, 'hello '))).toMatchObject({ kind: 'message', incomplete: false, optedOut: false });
    const listed = await fetch(`${api.baseUrl}/v1/inbound`, { headers: { authorization: `Bearer ${token}` } });
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as { messages: { from: string; to: string; text: string }[] };
    expect(body.messages).toMatchObject([{ from: '353861234567', to: '50999', text: 'hello world' }]);
  });
});

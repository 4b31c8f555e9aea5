import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/common/log.js';
import { startApiFixture } from '../support/api-fixture.js';
import { fetchChecked } from '../support/openapi-check.js';

describe('request log', () => {
  it('writes one line per request with method, path, status and duration, and never the token', async () => {
    const destination = new PassThrough();
    let output = '';
    destination.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const fixture = await startApiFixture({ logger: createLogger({ level: 'info', destination }), startProcessor: false });
    try {
      const { token } = await fixture.createAccount();
      await fixture.postCampaign(token, { text: 'secret text', from: 'Acme', recipientInfo: [{ msisdn: '1' }] });
      await fixture.getSummary(token, 'not-a-uuid');
      await fetchChecked(`${fixture.baseUrl}/health?token=${token}`);
      await new Promise((r) => setImmediate(r));
      const requests = output.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((entry) => entry['msg'] === 'request');
      expect(requests.map((r) => [r['method'], r['path'], r['status']])).toEqual([
        ['POST', '/v1/campaign', 202],
        ['GET', '/v1/campaign/not-a-uuid', 400],
        ['GET', '/health', 200],
      ]);
      for (const entry of requests) expect(typeof entry['durationMs']).toBe('number');
      expect(output).not.toContain(token);
      expect(output).not.toContain('secret text');
    } finally {
      await fixture.close();
    }
  });
});

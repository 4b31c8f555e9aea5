/**
 * "one account cannot starve another": a 2,000-recipient campaign of one account
 * is being sent at a paced 200 messages/s over SMPP to the test SMSC when another account posts a
 * 1-recipient campaign through the API. Counted at the SMSC (not timed): the small campaign's
 * message is submitted before the large campaign finishes, after at most a bounded number of the
 * large one's messages (the queue ahead of it is kept to about half a second of sending, plus what
 * is sent while the small campaign is processed); with one global FIFO it came after all of them.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, resolveConfigFromObject, type SmsGateConfig } from '../../src/index.js';
import { seedAccount, type SeededAccount } from '../support/gateway-process.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { baseUrlOf, gatewayConfig, getSummary, postCampaign, tempDir, until } from './e2e-setup.js';

const LARGE = 2_000;
const RATE_PER_SECOND = 200;
/** Large-campaign messages allowed between posting the small campaign and its submit. */
const MAX_AHEAD = 500;

let dir: string;
let smsc: ReceiptingSmsc;
let config: SmsGateConfig;
let large: SeededAccount;
let small: SeededAccount;

beforeAll(async () => {
  dir = tempDir('fair');
  smsc = await ReceiptingSmsc.start();
  config = resolveConfigFromObject(gatewayConfig(dir, smsc.address, { window: 10, maxPerSecond: RATE_PER_SECOND }), join(dir, 'smsgate.json'));
  large = await seedAccount(config, { clientName: 'bulk', senders: [{ name: 'Bulk', type: 0 }] });
  small = await seedAccount(config, { clientName: 'corner-shop', senders: [{ name: 'Shop', type: 0 }] });
}, 60_000);

afterAll(async () => {
  await smsc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('fair claims across campaigns', () => {
  it('sends a small campaign posted during a large one within a bounded number of the large one\'s messages', async () => {
    const gateway = await createGateway(config);
    await gateway.start();
    try {
      const baseUrl = baseUrlOf(gateway);
      const bulk = Array.from({ length: LARGE }, (_, i) => ({ msisdn: `35386${String(i).padStart(7, '0')}` }));
      const posted = await postCampaign(baseUrl, large.token, { text: 'Bulk offer', from: 'Bulk', recipientInfo: bulk });
      expect(posted.status).toBe(202);
      await until(() => smsc.submitsByDestination.size, (n) => n >= 200, 60_000, 'the large campaign under way');

      const submittedBeforePost = smsc.submitsByDestination.size;
      const lone = await postCampaign(baseUrl, small.token, { text: 'Your order is ready', from: 'Shop', recipientInfo: [{ msisdn: '353879999999' }] });
      expect(lone.status).toBe(202);
      await until(() => getSummary(baseUrl, small.token, lone.id), (s) => s?.pending === 0, 60_000, 'the small campaign delivered');

      // submitsByDestination keeps first-submit order.
      const order = [...smsc.submitsByDestination.keys()];
      const at = order.indexOf('353879999999');
      expect(at).toBeGreaterThanOrEqual(submittedBeforePost);
      expect(at - submittedBeforePost).toBeLessThanOrEqual(MAX_AHEAD);
      expect(at).toBeLessThan(LARGE);

      const summary = await until(() => getSummary(baseUrl, large.token, posted.id), (s) => s?.pending === 0, 120_000, 'the large campaign delivered');
      expect(summary).toEqual({ totalSent: LARGE, delivered: LARGE, undelivered: 0, pending: 0 });
      expect(smsc.submitsByDestination.size).toBe(LARGE + 1);
    } finally {
      await gateway.stop();
    }
  }, 180_000);
});

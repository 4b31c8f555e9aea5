/**
 * A gateway with its admin listener, routed to the receipting SMPP test SMSC, with a webhook
 * receiver: what the admin tests scrape and load. The SMPP transport's rate is kept low so a
 * campaign lasts long enough to be seen in progress.
 */
import { rmSync } from 'node:fs';
import type { Logger } from '../../src/common/log.js';
import { createGateway, SIMULATOR_DEMO_OUTCOMES, type Gateway } from '../../src/index.js';
import type { SmsGateConfig } from '../../src/gateway/config.js';
import { seedAccount, writeGatewayConfig, type SeededAccount } from '../support/gateway-process.js';
import { ReceiptingSmsc } from '../support/receipting-smsc.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { baseUrlOf, gatewayConfig, postCampaign, tempDir } from '../e2e/e2e-setup.js';

export interface AdminFixture {
  dir: string;
  smsc: ReceiptingSmsc;
  receiver: WebhookReceiver;
  gateway: Gateway;
  account: SeededAccount;
  apiUrl: string;
  adminUrl: string;
  config: SmsGateConfig;
  stop(): Promise<void>;
}

/** Recipients whose msisdn ends in 9 get UNDELIV receipts; the receiver answers 400 (a dead letter) for msisdns ending in 8. */
/**
 * `simulator`: also a simulator transport `sim` with the demo outcomes (config/simulator-demo.json:
 * 9 UNDELIV, 8 rejected REJECTD, 7 throttled once), routed numbers starting 44.
 */
export async function startAdminFixture(
  name: string,
  options: {
    maxPerSecond?: number;
    window?: number;
    receiptDelayMs?: number;
    simulator?: boolean;
    extraTransports?: (smsc: { host: string; port: number }) => Record<string, unknown>[];
    /** The gateway's logger (default silent). */
    logger?: Logger;
    /** credits.lowThreshold, set on the loaded config (the accounts config section declares the key). */
    lowCreditsThreshold?: number;
  } = {},
): Promise<AdminFixture> {
  const dir = tempDir(name);
  const started: { smsc?: ReceiptingSmsc; receiver?: WebhookReceiver; gateway?: Gateway } = {};
  const stop = async (): Promise<void> => {
    await started.gateway?.stop();
    await started.receiver?.close();
    await started.smsc?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    started.smsc = await ReceiptingSmsc.start({ statusFor: (destination) => (destination.endsWith('9') ? 'UNDELIV' : 'DELIVRD'), receiptDelayMs: options.receiptDelayMs ?? 0 });
    started.receiver = await WebhookReceiver.start();
    started.receiver.respondWith((request) => {
      const body = JSON.parse(request.rawBody.toString('utf8')) as { To?: string };
      return body.To?.endsWith('8') === true ? { kind: 'status', statusCode: 400 } : undefined;
    });
    const base = gatewayConfig(dir, started.smsc.address, { maxPerSecond: options.maxPerSecond ?? 100, window: options.window ?? 10 });
    const raw: Record<string, unknown> = {
      ...base,
      transports: [...(base['transports'] as Record<string, unknown>[]), ...(options.extraTransports?.(started.smsc.address) ?? [])],
      logging: { level: 'silent' },
      admin: { host: '127.0.0.1', port: 0 },
    };
    if (options.simulator === true) {
      raw['transports'] = [...(raw['transports'] as object[]), { name: 'sim', type: 'simulator', receiptDelayMs: 50, outcomes: SIMULATOR_DEMO_OUTCOMES }];
      raw['routes'] = [{ prefix: '44', transport: 'sim' }, { prefix: '', transport: 'carrier' }];
    }
    const { config } = writeGatewayConfig(dir, raw);
    const account = await seedAccount(config, { clientName: 'acme <b>&co', webhookUrl: started.receiver.url, senders: [{ name: 'Admin', type: 0 }] });
    if (options.lowCreditsThreshold !== undefined) Object.assign(config, { credits: { lowThreshold: options.lowCreditsThreshold } });
    started.gateway = await createGateway(config, options.logger === undefined ? {} : { logger: options.logger });
    await started.gateway.start();
    const admin = started.gateway.admin?.address();
    if (admin === undefined) throw new Error('the admin listener is not listening');
    return {
      dir,
      smsc: started.smsc,
      receiver: started.receiver,
      gateway: started.gateway,
      account,
      apiUrl: baseUrlOf(started.gateway),
      adminUrl: `http://${admin.host}:${admin.port}`,
      config,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export function msisdns(count: number, prefix = '3538712'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);
}

export async function sendCampaign(fixture: AdminFixture, recipients: readonly string[], name = 'Spring sale'): Promise<string> {
  const { status, id } = await postCampaign(fixture.apiUrl, fixture.account.token, {
    campaignName: name,
    text: 'Admin test',
    from: 'Admin',
    recipientInfo: recipients.map((msisdn) => ({ msisdn })),
  });
  if (status !== 202) throw new Error(`campaign answered ${status}`);
  return id;
}

/** Prometheus text as `series -> value`, series written as `name{a="x",b="y"}` in the order given. */
export function parseMetrics(text: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}

export async function scrape(adminUrl: string): Promise<{ text: string; series: Map<string, number> }> {
  const response = await fetch(`${adminUrl}/metrics`);
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  const text = await response.text();
  return { text, series: parseMetrics(text) };
}

import { planMessage } from '../../../src/sms/index.js';
import type { SmppTransportConfig } from '../../../src/transports/smpp/index.js';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import type { OutboundMessage, TransportHandlers, TransportReceipt, TransportState } from '../../../src/transports/transport.js';
import { TestSmsc, type TestSmscOptions } from '../../support/smsc/test-smsc.js';

export function smppConfig(smsc: TestSmsc, overrides: Partial<SmppTransportConfig> = {}): SmppTransportConfig {
  return {
    name: 'carrier',
    type: 'smpp',
    host: smsc.address.host,
    port: smsc.address.port,
    systemId: smsc.options.systemId,
    password: smsc.options.password,
    bindMode: 'transceiver',
    maxPerSecond: 100_000,
    responseTimeoutMs: 2_000,
    reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    ...overrides,
  };
}

let nextKey = 1;

/** A message planned by the SMS core, as the engine would hand it over. */
export function outbound(text: string, overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  const plan = planMessage(text);
  return {
    messageKey: `m${nextKey++}`,
    destination: '353871234567',
    sender: { value: 'smsgate', kind: 'alphanumeric', ton: 5, npi: 0 },
    encoding: plan.encoding,
    segments: plan.segments,
    concatReference: 0x1234,
    ...overrides,
  };
}

export interface Recorder extends TransportHandlers {
  receipts: TransportReceipt[];
  states: TransportState[];
  inbound: { from: string; to: string; text: string }[];
  /** Set to make onReceipt reject (the engine failed to store it). */
  failReceipts: boolean;
}

export function recorder(): Recorder {
  const rec: Recorder = {
    receipts: [],
    states: [],
    inbound: [],
    failReceipts: false,
    async onReceipt(receipt) {
      if (rec.failReceipts) throw new Error('store unavailable');
      rec.receipts.push(receipt);
    },
    async onInbound(message) {
      rec.inbound.push({ from: message.from, to: message.to, text: message.text });
    },
    onState(state) {
      rec.states.push(state);
    },
  };
  return rec;
}

/** Polls until check() is true; fails with `what` after timeoutMs. Not a timing assertion: a bound on waiting. */
export async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export interface Rig {
  smsc: TestSmsc;
  transport: SmppTransport;
  handlers: Recorder;
  close(): Promise<void>;
}

export async function startRig(smscOptions: TestSmscOptions = {}, overrides: Partial<SmppTransportConfig> = {}): Promise<Rig> {
  const smsc = await TestSmsc.start(smscOptions);
  const transport = new SmppTransport(smppConfig(smsc, overrides));
  const handlers = recorder();
  transport.setHandlers(handlers);
  await transport.start();
  return {
    smsc,
    transport,
    handlers,
    async close() {
      await transport.stop(1_000);
      await smsc.stop();
    },
  };
}

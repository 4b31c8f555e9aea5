/**
 * One sink of the e2e bench in its own process, so neither the SMSC nor the webhook receiver
 * shares an event loop with the bench driver, and each gets its own share of the 2 cores:
 *
 *   node sink-process.js smsc '{"receiptDelayMs":100,"receiptWindow":256,"undeliveredSuffix":"9"}'
 *   node sink-process.js receiver '{"secret":"..."}'
 *
 * Talks to the bench over the IPC channel (sinks.ts): sends `listening` once up, `progress`
 * counters every PROGRESS_EVERY_MS, the recorded event times on `collect`, and exits on `stop` or
 * when the channel closes (the bench died). Every time is CLOCK_MONOTONIC in ms (monoMs), the
 * clock every process on this machine shares, so the bench can put the events of the gateway,
 * the SMSC and the receiver on one timeline.
 */
import { ReceiptingSmsc } from '../../test/support/receipting-smsc.js';
import { WebhookReceiver } from '../../test/support/webhook-receiver.js';
import { monoMs } from './clock.js';
import type { ReceiverEvents, ReceiverSinkConfig, SinkMessage, SinkRequest, SmscEvents, SmscSinkConfig } from './sink-protocol.js';

const PROGRESS_EVERY_MS = 50;

function send(message: SinkMessage): void {
  process.send?.(message);
}

/** The recipient a webhook or dlr-url callback is about: the number, without a leading +. */
function recipientOf(path: string, rawBody: Buffer): string | undefined {
  // Kannel's dlr-url carries it in the query (to=%p); smsgate's signed body has "To" (SPEC: Delivery Receipt).
  const query = path.indexOf('?');
  if (query >= 0) {
    const to = new URLSearchParams(path.slice(query + 1)).get('to');
    if (to !== null) return to.replace(/^\+/, '');
  }
  if (rawBody.length === 0) return undefined;
  try {
    const to = (JSON.parse(rawBody.toString('utf8')) as { To?: unknown }).To;
    return typeof to === 'string' ? to.replace(/^\+/, '') : undefined;
  } catch {
    return undefined;
  }
}

async function runSmsc(config: SmscSinkConfig): Promise<void> {
  const events: SmscEvents = { submittedAtMs: [], acknowledgedAtMs: [], acknowledgedRecipients: [] };
  const smsc = await ReceiptingSmsc.start({
    statusFor: (destination) => (destination.endsWith(config.undeliveredSuffix) ? 'UNDELIV' : 'DELIVRD'),
    countByDestination: false,
    receiptWindow: config.receiptWindow,
    receiptDelayMs: config.receiptDelayMs,
    onSubmitted: () => events.submittedAtMs.push(monoMs()),
    // The moment the gateway's deliver_sm_resp arrives: it answers only after the receipt is
    // committed, so this is the "receipt stored" time the lag is measured from.
    onReceiptAcknowledged: (_id, destination) => {
      events.acknowledgedAtMs.push(monoMs());
      events.acknowledgedRecipients.push(destination.replace(/^\+/, ''));
    },
  });
  const progress = setInterval(
    () => send({ kind: 'progress', progress: { boundSessions: smsc.smsc.boundSessions().length, submitted: smsc.submitCount, receiptsAcknowledged: smsc.receiptsAcknowledged, webhooksAcknowledged: 0, signatureFailures: 0 } }),
    PROGRESS_EVERY_MS,
  );
  await serve({ listening: { host: smsc.address.host, port: smsc.address.port, url: '' }, collect: () => ({ smsc: events }), stop: async () => {
    clearInterval(progress);
    await smsc.stop();
  } });
}

async function runReceiver(config: ReceiverSinkConfig): Promise<void> {
  const events: ReceiverEvents = { acknowledgedAtMs: [], acknowledgedRecipients: [], unidentified: 0 };
  const receiver = await WebhookReceiver.start({ secret: config.secret, keepBodies: true, keepRequests: false });
  // Called for each request whose signature is good, right before its 200 is written.
  receiver.respondWith((request) => {
    const recipient = recipientOf(request.path, request.rawBody);
    if (recipient === undefined) events.unidentified++;
    else {
      events.acknowledgedAtMs.push(monoMs());
      events.acknowledgedRecipients.push(recipient);
    }
    return undefined;
  });
  const progress = setInterval(
    () => send({ kind: 'progress', progress: { boundSessions: 0, submitted: 0, receiptsAcknowledged: 0, webhooksAcknowledged: receiver.acknowledged, signatureFailures: receiver.signatureFailures } }),
    PROGRESS_EVERY_MS,
  );
  const port = Number(new URL(receiver.url).port);
  await serve({ listening: { host: '127.0.0.1', port, url: receiver.url }, collect: () => ({ receiver: events }), stop: async () => {
    clearInterval(progress);
    await receiver.close();
  } });
}

async function serve(sink: {
  listening: { host: string; port: number; url: string };
  collect: () => { smsc?: SmscEvents; receiver?: ReceiverEvents };
  stop: () => Promise<void>;
}): Promise<void> {
  process.on('message', (request: SinkRequest) => {
    if (request.kind === 'collect') send({ kind: 'events', ...sink.collect() });
    else if (request.kind === 'stop') void sink.stop().finally(() => process.exit(0));
  });
  send({ kind: 'listening', ...sink.listening });
}

// The bench is gone (crashed, killed): nothing left to serve.
process.on('disconnect', () => process.exit(0));

const [role, rawConfig] = process.argv.slice(2);
const config: unknown = JSON.parse(rawConfig ?? '{}');
if (role === 'smsc') await runSmsc(config as SmscSinkConfig);
else if (role === 'receiver') await runReceiver(config as ReceiverSinkConfig);
else {
  process.stderr.write(`usage: sink-process.js smsc|receiver CONFIG_JSON (got ${role})\n`);
  process.exit(2);
}

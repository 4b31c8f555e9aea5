/**
 * A deliver_sm whose esm_class marks an ordinary message (type 0) and that has
 * no receipted_message_id, but whose text is a well-formed receipt (`id:… stat:…`) for a part we
 * submitted on that transport, is read as that receipt. Anything else stays an inbound message.
 * Over SMPP loopback against our test SMSC and the Perl Net::SMPP SMSC, and through the dispatch
 * engine into SQLite.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { receiptInMessageText } from '../../../src/receipts/index.js';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import type { PartOutcome } from '../../../src/transports/transport.js';
import { startEngineHarness, waitFor as waitForValue, type EngineHarness } from '../../engine/engine-harness.js';
import { PerlSmsc } from '../../support/perl-smsc/perl-smsc.js';
import { TestSmsc } from '../../support/smsc/test-smsc.js';
import { outbound, recorder, smppConfig, waitFor, type Recorder } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A recorder that knows the ids of the parts it saw accepted, as the engine's store does. */
function knowingRecorder(): Recorder & { submitted: Set<string> } {
  const submitted = new Set<string>();
  return Object.assign(recorder(), { submitted, isSubmittedMessageId: async (id: string) => submitted.has(id) });
}

function acceptedId(outcomes: PartOutcome[]): string {
  const [outcome] = outcomes;
  if (outcome?.kind !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(outcome)}`);
  return outcome.messageId;
}

async function rig(): Promise<{ smsc: TestSmsc; handlers: ReturnType<typeof knowingRecorder>; send: () => Promise<string> }> {
  const smsc = await TestSmsc.start({ autoReceipt: null });
  cleanups.push(() => smsc.stop());
  const transport = new SmppTransport(smppConfig(smsc));
  const handlers = knowingRecorder();
  transport.setHandlers(handlers);
  await transport.start();
  cleanups.push(() => transport.stop(1_000));
  return {
    smsc,
    handlers,
    async send() {
      const id = acceptedId(await transport.submit(outbound('to be receipted')));
      handlers.submitted.add(id);
      return smsc.submits[smsc.submits.length - 1]!.messageId!;
    },
  };
}

function receiptText(id: string, stat = 'DELIVRD'): string {
  return `id:${id} sub:001 dlvrd:001 submit date:2311211530 done date:2311211531 stat:${stat} err:000 text:to be receipted`;
}

describe('receiptInMessageText', () => {
  it.each([
    ['a full Appendix B text', receiptText('42'), '42'],
    ['only id and stat', 'id:42 stat:UNDELIV', '42'],
  ])('reads %s', (_name, text, id) => {
    expect(receiptInMessageText(text, 'as-is')?.messageId).toBe(id);
  });

  it.each([
    ['a plain message', 'see you at 5'],
    ['an id without stat', 'id:42 is my number'],
    ['a stat without id', 'stat:DELIVRD'],
    ['an empty stat', 'id:42 stat: text:x'],
  ])('refuses %s', (_name, text) => {
    expect(receiptInMessageText(text, 'as-is')).toBeNull();
  });
});

describe('unmarked receipts over SMPP (our test SMSC)', () => {
  it('reads a type-0 deliver_sm with receipt text for a submitted part as its receipt', async () => {
    const { smsc, handlers, send } = await rig();
    const smscId = await send();
    const status = await smsc.sendDeliverSm({ source_addr: '353871234567', esm_class: 0, data_coding: 0, short_message: Buffer.from(receiptText(smscId)) });
    expect(status).toBe(0);
    expect(handlers.inbound).toEqual([]);
    expect(handlers.receipts).toEqual([expect.objectContaining({ messageId: [...handlers.submitted][0], status: 'DELIVRD', final: true })]);
  });

  it('keeps a receipt-shaped text whose id matches no submitted part as an inbound message', async () => {
    const { smsc, handlers, send } = await rig();
    await send();
    const text = receiptText('999999');
    expect(await smsc.sendDeliverSm({ source_addr: '353861111111', destination_addr: '50123', esm_class: 0, data_coding: 0, short_message: Buffer.from(text) })).toBe(0);
    expect(handlers.receipts).toEqual([]);
    expect(handlers.inbound).toEqual([{ from: '353861111111', to: '50123', text }]);
  });

  it('keeps a text with a submitted id but no stat: as an inbound message', async () => {
    const { smsc, handlers, send } = await rig();
    const smscId = await send();
    const text = `id:${smscId} please call me`;
    expect(await smsc.sendDeliverSm({ source_addr: '353861111111', destination_addr: '50123', esm_class: 0, data_coding: 0, short_message: Buffer.from(text) })).toBe(0);
    expect(handlers.receipts).toEqual([]);
    expect(handlers.inbound.map((message) => message.text)).toEqual([text]);
  });
});

describe('unmarked receipts from the Perl Net::SMPP SMSC (--receipt-esm-class 0)', () => {
  it('matches the receipt it sends as an ordinary message to the submitted part', async () => {
    const smsc = await PerlSmsc.start({ receiptEsmClass: 0 });
    cleanups.push(() => smsc.stop());
    const transport = new SmppTransport({
      name: 'perl', type: 'smpp', ...smsc.address, systemId: 'esme', password: 'secret', bindMode: 'transceiver',
      responseTimeoutMs: 5_000, reconnect: { initialDelayMs: 100, maxDelayMs: 500 },
    });
    const handlers = knowingRecorder();
    // The Perl SMSC sends the receipt right after submit_sm_resp; the lookup's retries cover the
    // moment before the outcome (and so the id) is recorded, as the engine's group commit would.
    transport.setHandlers(handlers);
    await transport.start();
    cleanups.push(() => transport.stop(1_000));
    handlers.submitted.add(acceptedId(await transport.submit(outbound('Hello from smsgate'))));
    await waitFor(() => handlers.receipts.length === 1, 'the receipt');
    expect(handlers.inbound).toEqual([]);
    expect(handlers.receipts[0]).toMatchObject({ messageId: '4000000000', status: 'DELIVRD', final: true });
    expect(await smsc.waitFor('receipt')).toMatchObject([{ message_id: '4000000000' }]);
    expect(await smsc.waitFor('deliver_sm_resp')).toMatchObject([{ status: 0 }]);
  });
});

describe('unmarked receipts through the dispatch engine', () => {
  it('delivers the recipient whose part the type-0 receipt names, and stores no inbound message', async () => {
    const smsc = await TestSmsc.start({ autoReceipt: null });
    cleanups.push(() => smsc.stop());
    const harness: EngineHarness = await startEngineHarness({ transports: [new SmppTransport(smppConfig(smsc))] });
    cleanups.push(() => harness.close());
    const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234567'] });
    const [part] = await waitForValue(() => harness.parts(campaignId), (parts) => parts[0]?.message_id != null);
    const smscId = smsc.submits[0]!.messageId!;
    expect(await smsc.sendDeliverSm({ source_addr: '353871234567', esm_class: 0, data_coding: 0, short_message: Buffer.from(receiptText(smscId)) })).toBe(0);
    await waitForValue(() => harness.recipients(campaignId), (rows) => rows[0]?.status === 'delivered');
    expect(harness.receipts()).toEqual([expect.objectContaining({ message_id: part!.message_id, status: 'DELIVRD', match_state: 'matched' })]);
    expect(harness.store.db.prepare('SELECT COUNT(*) AS n FROM inbound_messages').get()).toEqual({ n: 0 });
  });
});

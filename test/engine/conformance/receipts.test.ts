/**
 * Engine conformance: receipts on both backends. A receipt that arrives before its
 * submit_sm_resp (scripted, and over real SMPP) is kept unmatched and applied once the message id
 * is written; receipts arriving on another bind than the submit's are matched; an unmatched
 * receipt older than engine.unmatchedReceiptTtlMs is expired (the sweep applies one whose part has
 * its message id by now first), logged once per sweep, not once per receipt.
 */
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../../src/common/log.js';
import { SimulatorTransport } from '../../../src/transports/simulator/index.js';
import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { ClusterSmsc } from '../../support/cluster-smsc.js';
import { TestSmsc } from '../../support/smsc/test-smsc.js';
import { smppConfig } from '../../transports/smpp/helpers.js';
import { ScriptedTransport } from '../scripted-transport.js';
import { allFinal, describeEngineConformance, msisdns, until, webhookStatuses } from './engine-backends.js';

/** 200 GSM-7 characters: two concatenated parts of 153. */
const TWO_PART_TEXT = 'A'.repeat(200);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function simulator(): SimulatorTransport {
  return new SimulatorTransport({ name: 'sim', type: 'simulator', maxPerSecond: 100_000, receiptDelayMs: 3_600_000, outcomes: [] }, { recordAccepted: true });
}

describeEngineConformance('engine receipts', (open) => {
  it('matches a receipt that arrives before its submit response once the message id is written', async () => {
    const rig = await open();
    const transport = new ScriptedTransport();
    await rig.startEngine({ transports: [transport] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234567'] });
    await until(async () => transport.held.length, (n) => n === 1);
    expect((await rig.parts(campaignId))[0]?.state).toBe('submitting');
    await transport.handlers!.onReceipt({ messageId: 'abc123', status: 'DELIVRD', final: true, raw: 'id:abc123 stat:DELIVRD' });
    expect((await rig.receipts())[0]).toMatchObject({ match_state: 'pending', part_id: null });
    transport.held.shift()!.answer([{ part: 1, kind: 'accepted', messageId: 'abc123' }]);
    const [recipient] = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipient).toMatchObject({ status: 'delivered', last_status: 'DELIVRD' });
    expect(await rig.receipts()).toMatchObject([{ match_state: 'matched', part_id: (await rig.parts(campaignId))[0]?.id }]);
    expect((await rig.parts(campaignId))[0]).toMatchObject({ state: 'delivered', message_id: 'abc123', attempts: 1 });
    expect(await rig.outbox()).toHaveLength(1);
    expect(rig.engine.stats()).toMatchObject({ receiptsMatched: 0, receiptsParked: 1 });
  });

  it('applies several receipts that arrived before the submit response in arrival order once the message id is written', async () => {
    const rig = await open();
    const transport = new ScriptedTransport();
    await rig.startEngine({ transports: [transport] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234567'] });
    await until(async () => transport.held.length, (n) => n === 1);
    await transport.handlers!.onReceipt({ messageId: 'early', status: 'ENROUTE', final: false, raw: 'id:early stat:ENROUTE' });
    await transport.handlers!.onReceipt({ messageId: 'early', status: 'DELIVRD', final: true, raw: 'id:early stat:DELIVRD' });
    await transport.handlers!.onReceipt({ messageId: 'early', status: 'UNDELIV', final: true, raw: 'id:early stat:UNDELIV' });
    expect((await rig.receipts()).map((r) => r.match_state)).toEqual(['pending', 'pending', 'pending']);
    expect(await rig.outbox()).toEqual([]);
    transport.held.shift()!.answer([{ part: 1, kind: 'accepted', messageId: 'early' }]);
    await until(() => rig.recipients(campaignId), allFinal);
    expect(await rig.recipients(campaignId)).toMatchObject([{ status: 'delivered', last_status: 'DELIVRD' }]);
    expect(await rig.parts(campaignId)).toMatchObject([{ state: 'delivered', last_status: 'DELIVRD', message_id: 'early' }]);
    const partId = (await rig.parts(campaignId))[0]!.id;
    expect((await rig.receipts()).map((r) => [r.status, r.match_state, r.part_id])).toEqual([
      ['ENROUTE', 'matched', partId], ['DELIVRD', 'matched', partId], ['UNDELIV', 'matched', partId],
    ]);
    expect((await rig.outbox()).map((o) => (JSON.parse(o.body) as { Status: string }).Status)).toEqual(['ENROUTE', 'DELIVRD']);
  });

  it('matches a receipt only on the transport that submitted the message id', async () => {
    const rig = await open();
    const a = new ScriptedTransport('a');
    const b = new ScriptedTransport('b');
    await rig.startEngine({ transports: [a, b] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234567'] });
    await until(async () => a.held.length, (n) => n === 1);
    a.held.shift()!.answer([{ part: 1, kind: 'accepted', messageId: 'm-1' }]);
    await until(() => rig.parts(campaignId), (ps) => ps[0]?.state === 'submitted');
    await b.handlers!.onReceipt({ messageId: 'm-1', status: 'UNDELIV', final: true, raw: 'id:m-1 stat:UNDELIV' });
    expect(await rig.recipients(campaignId)).toMatchObject([{ status: 'pending' }]);
    await a.handlers!.onReceipt({ messageId: 'm-1', status: 'DELIVRD', final: true, raw: 'id:m-1 stat:DELIVRD' });
    expect(await rig.recipients(campaignId)).toMatchObject([{ status: 'delivered', last_status: 'DELIVRD' }]);
    expect((await rig.receipts()).map((r) => [r.transport, r.status, r.match_state])).toEqual([['b', 'UNDELIV', 'pending'], ['a', 'DELIVRD', 'matched']]);
    expect(rig.engine.stats()).toMatchObject({ receiptsMatched: 1, receiptsParked: 1 });
  });

  it('records a receipt\'s status, error code and done time on the receipt row and its part, and stamps the final time', async () => {
    const rig = await open();
    const transport = new ScriptedTransport();
    await rig.startEngine({ transports: [transport] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: ['353871234567', '353871234568'] });
    await until(async () => transport.held.length, (n) => n === 2);
    const byDestination = new Map(transport.held.map((h) => [h.message.destination, h]));
    byDestination.get('353871234567')!.answer([{ part: 1, kind: 'accepted', messageId: 'm-a' }]);
    byDestination.get('353871234568')!.answer([{ part: 1, kind: 'accepted', messageId: 'm-b' }]);
    const submitted = await until(() => rig.parts(campaignId), (ps) => ps.every((p) => p.state === 'submitted'));
    expect(submitted.map((p) => [p.message_id, p.attempts, p.final_at, p.last_status, p.last_error_code])).toEqual([['m-a', 1, null, null, null], ['m-b', 1, null, null, null]]);
    expect(submitted.every((p) => typeof p.submitted_at === 'number')).toBe(true);

    const before = Date.now();
    await transport.handlers!.onReceipt({ messageId: 'm-a', status: 'UNDELIV', final: true, errorCode: '0x0B', doneAt: '2026-11-21T10:00:00.000Z', raw: 'id:m-a stat:UNDELIV err:00B' });
    await transport.handlers!.onReceipt({ messageId: 'm-b', status: 'ENROUTE', final: false, raw: 'id:m-b stat:ENROUTE' });
    await transport.handlers!.onReceipt({ messageId: 'm-b', status: 'DELIVRD', final: true, raw: 'id:m-b stat:DELIVRD' });
    const after = Date.now();
    const parts = await rig.parts(campaignId);
    expect(parts.map((p) => [p.state, p.last_status, p.last_error_code])).toEqual([['undelivered', 'UNDELIV', '0x0B'], ['delivered', 'DELIVRD', null]]);
    for (const part of parts) {
      expect(part.final_at).toBeGreaterThanOrEqual(before);
      expect(part.final_at).toBeLessThanOrEqual(after);
    }
    expect((await rig.receipts()).map((r) => [r.message_id, r.status, r.final, r.error_code, r.done_at, r.raw, r.match_state, r.part_id])).toEqual([
      ['m-a', 'UNDELIV', 1, '0x0B', '2026-11-21T10:00:00.000Z', 'id:m-a stat:UNDELIV err:00B', 'matched', parts[0]!.id],
      ['m-b', 'ENROUTE', 0, null, null, 'id:m-b stat:ENROUTE', 'matched', parts[1]!.id],
      ['m-b', 'DELIVRD', 1, null, null, 'id:m-b stat:DELIVRD', 'matched', parts[1]!.id],
    ]);
    expect((await rig.recipients(campaignId)).map((r) => [r.status, r.last_status])).toEqual([['undelivered', 'UNDELIV'], ['delivered', 'DELIVRD']]);
    expect((await rig.outbox()).map((o) => JSON.parse(o.body) as { To: string; Status: string }).map((o) => [o.To, o.Status])).toEqual([
      ['353871234567', 'UNDELIV'],
      ['353871234568', 'ENROUTE'],
      ['353871234568', 'DELIVRD'],
    ]);
  });

  it('matches every receipt an SMSC sends before its submit_sm_resp, each counted once', async () => {
    const rig = await open();
    const smsc = await TestSmsc.start({ autoReceipt: { stat: 'DELIVRD', beforeResponse: true } });
    cleanups.push(() => smsc.stop());
    const engine = await rig.startEngine({ transports: [new SmppTransport(smppConfig(smsc))] });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), text: TWO_PART_TEXT, msisdns: msisdns(4) });
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.map((r) => r.status)).toEqual(Array(4).fill('delivered'));
    expect((await rig.parts(campaignId)).map((p) => p.state)).toEqual(Array(8).fill('delivered'));
    const receipts = await rig.receipts();
    expect(receipts).toHaveLength(8);
    expect(receipts.every((r) => r.match_state === 'matched' && r.part_id !== null)).toBe(true);
    // Whether kept unmatched a moment or matched with the submit outcome, each counted once.
    expect(engine.stats().receiptsMatched + engine.stats().receiptsParked).toBe(8);
    expect([...webhookStatuses(await rig.outbox()).values()]).toEqual(Array(4).fill(['DELIVRD']));
  });

  it('matches receipts an SMSC sends on another bind than the one that submitted the message', async () => {
    const rig = await open();
    const smsc = await ClusterSmsc.start({ maxBinds: 2 });
    cleanups.push(() => smsc.stop());
    const transport = new SmppTransport({
      name: 'carrier', type: 'smpp', host: smsc.address.host, port: smsc.address.port, systemId: 'esme', password: 'secret', bindMode: 'transceiver',
      binds: 2, maxPerSecond: 100_000, responseTimeoutMs: 5_000, reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    });
    await rig.startEngine({ transports: [transport] });
    await until(async () => smsc.boundCount, (n) => n === 2);
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(20) });
    const recipients = await until(() => rig.recipients(campaignId), allFinal);
    expect(recipients.map((r) => [r.status, r.last_status])).toEqual(Array(20).fill(['delivered', 'DELIVRD']));
    expect(smsc.submitCount).toBe(20);
    await until(async () => smsc.receiptsAcknowledged, (n) => n === 20);
    expect(smsc.receiptsOnOtherBind).toBe(20);
    expect((await rig.receipts()).map((r) => r.match_state)).toEqual(Array(20).fill('matched'));
  });

  it('keeps an unmatched receipt pending, then expires it after engine.unmatchedReceiptTtlMs', async () => {
    const rig = await open();
    const sim = simulator();
    const engine = await rig.startEngine({ transports: [sim], engine: { unmatchedReceiptTtlMs: 60_000 } });
    await sim.reportReceipt({ messageId: 'no-such-id', status: 'DELIVRD' });
    expect(await rig.receipts()).toMatchObject([{ message_id: 'no-such-id', match_state: 'pending', part_id: null }]);
    expect(await engine.expireUnmatchedReceipts()).toBe(0);
    rig.clockSkewMs = 60_001;
    expect(await engine.expireUnmatchedReceipts()).toBe(1);
    expect((await rig.receipts())[0]?.match_state).toBe('expired');
  });

  it('expires an unmatched receipt by itself once it is older than engine.unmatchedReceiptTtlMs (the scheduler\'s periodic sweep)', async () => {
    const rig = await open();
    const sim = simulator();
    await rig.startEngine({ transports: [sim], engine: { unmatchedReceiptTtlMs: 60_000 } });
    await sim.reportReceipt({ messageId: 'no-such-id', status: 'DELIVRD' });
    expect(await rig.receipts()).toMatchObject([{ match_state: 'pending' }]);
    // A minute and a poll later the scheduler's sweep (every tenth of the TTL, here 6 s) finds it expired.
    rig.clockSkewMs = 60_001 + 6_000;
    await until(() => rig.receipts(), (rows) => rows[0]?.match_state === 'expired');
  });

  it('the sweep applies an unmatched receipt whose part has its message id by now, and expires one past the TTL', async () => {
    const rig = await open();
    const sim = simulator();
    const engine = await rig.startEngine({ transports: [sim], engine: { unmatchedReceiptTtlMs: 600_000 } });
    const campaignId = await rig.seedCampaign({ clientId: await rig.seedClient(), msisdns: msisdns(1) });
    const [part] = await until(() => rig.parts(campaignId), (parts) => parts.length === 1 && parts[0]!.state === 'submitted');
    // Stored unmatched while the part had no message id (by an engine that stopped between the two
    // writes), and one for a message no part will ever have, received 601 s ago (the TTL is 600 s).
    const nowMs = Date.now();
    const receipt = { transport: 'sim', status: 'DELIVRD', final: true, errorCode: null, doneAt: null, matchState: 'pending' as const, partId: null };
    await rig.stores.dispatch.insertReceipt({ ...receipt, messageId: part!.message_id!, raw: 'id:x stat:DELIVRD', receivedAt: nowMs });
    await rig.stores.dispatch.insertReceipt({ ...receipt, messageId: 'no-such-id', raw: 'raw', receivedAt: nowMs - 601_000 });

    expect(await engine.expireUnmatchedReceipts()).toBe(1);
    expect((await rig.receipts()).map((r) => [r.message_id, r.match_state, r.part_id])).toEqual([
      [part!.message_id, 'matched', part!.id],
      ['no-such-id', 'expired', null],
    ]);
    expect(await rig.recipients(campaignId)).toMatchObject([{ status: 'delivered', last_status: 'DELIVRD' }]);
    expect(await rig.parts(campaignId)).toMatchObject([{ state: 'delivered' }]);
    expect([...webhookStatuses(await rig.outbox()).values()]).toEqual([['DELIVRD']]);
  });

  it('writes one warn line for 300 receipts that matched no part, counting them, with five examples', async () => {
    const rig = await open();
    const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as { level: number; msg: string });
        callback();
      },
    });
    const sim = simulator();
    const engine = await rig.startEngine({ transports: [sim], engine: { unmatchedReceiptTtlMs: 60_000 }, logger: createLogger({ level: 'info', destination }) });
    await Promise.all(Array.from({ length: 300 }, (_, i) => sim.reportReceipt({ messageId: `no-such-id-${i}`, status: 'DELIVRD' })));
    rig.clockSkewMs = 60_001;
    expect(await engine.expireUnmatchedReceipts()).toBe(300);
    const expiredLines = lines.filter((l) => l.msg.includes('matched no submitted part'));
    expect(expiredLines).toHaveLength(1);
    expect(expiredLines[0]).toMatchObject({ level: 40, expired: 300, byTransport: { sim: 300 } });
    expect(expiredLines[0]?.['examples']).toHaveLength(5);
  });
});

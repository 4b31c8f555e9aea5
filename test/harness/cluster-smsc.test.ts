/**
 * The cluster test's SMSC must itself be right before it can judge a cluster:
 * it refuses binds over the carrier's limit, sends receipts on another bind than the submit's,
 * and counts the most submits within one second exactly.
 */
import smpp from 'smpp';
import type { PDU, Session } from 'smpp';
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterSmsc, ESME_RBINDFAIL } from '../support/cluster-smsc.js';

const sessions: Session[] = [];
let smsc: ClusterSmsc | undefined;

afterEach(async () => {
  for (const s of sessions.splice(0)) s.destroy();
  await smsc?.stop();
  smsc = undefined;
});

function connect(port: number): Promise<Session> {
  return new Promise((resolve) => {
    const session = smpp.connect({ url: `smpp://127.0.0.1:${port}`, auto_enquire_link_period: 0 }, () => resolve(session));
    session.on('error', () => undefined);
    sessions.push(session);
  });
}

function bind(session: Session, systemId = 'esme'): Promise<number> {
  return new Promise((resolve) => session.bind_transceiver({ system_id: systemId, password: 'secret' }, (pdu: PDU) => resolve(pdu.command_status)));
}

function submit(session: Session, destination: string): Promise<string> {
  return new Promise((resolve) =>
    session.submit_sm({ destination_addr: destination, short_message: 'hi' }, (pdu: PDU) => resolve(String(pdu['message_id']))),
  );
}

function nextReceipt(session: Session): Promise<string> {
  return new Promise((resolve) => {
    session.once('deliver_sm', (pdu: PDU) => {
      session.send(pdu.response());
      resolve(Buffer.from(pdu['short_message'].message as string, 'latin1').toString('latin1'));
    });
  });
}

describe('ClusterSmsc (the carrier a cluster test runs against)', () => {
  it('refuses a bind over the limit per system_id with ESME_RBINDFAIL and records the most binds at once', async () => {
    smsc = await ClusterSmsc.start({ maxBinds: 2 });
    const [a, b, c] = await Promise.all([connect(smsc.address.port), connect(smsc.address.port), connect(smsc.address.port)]);
    expect(await bind(a as Session)).toBe(0);
    expect(await bind(b as Session)).toBe(0);
    expect(await bind(c as Session)).toBe(ESME_RBINDFAIL);
    expect(smsc.maxConcurrentBinds).toBe(2);
    expect(smsc.bindsRefused).toBe(1);
  });

  it("sends a message's receipt on another bind than the one that submitted it", async () => {
    smsc = await ClusterSmsc.start({ maxBinds: 2 });
    const a = await connect(smsc.address.port);
    const b = await connect(smsc.address.port);
    await bind(a);
    await bind(b);
    let receivedOnSubmitter = false;
    a.on('deliver_sm', () => (receivedOnSubmitter = true));
    const receipt = nextReceipt(b);
    const messageId = await submit(a, '353861234567');
    expect(await receipt).toContain(`id:${messageId} `);
    expect(receivedOnSubmitter).toBe(false);
    await expect.poll(() => smsc?.receiptsOnOtherBind).toBe(1);
  });

  it('counts duplicates per destination and the most submits within any second', async () => {
    smsc = await ClusterSmsc.start({ maxBinds: 1 });
    const a = await connect(smsc.address.port);
    await bind(a);
    a.on('deliver_sm', (pdu: PDU) => a.send(pdu.response()));
    for (const d of ['353860000001', '353860000002', '353860000001']) await submit(a, d);
    expect(smsc.duplicates()).toEqual({ destinations: 1, extraSubmits: 1 });
    expect(smsc.maxSubmitsWithin(1_000)).toBe(3);
    expect(smsc.maxSubmitsWithin(0)).toBe(0);
  });

  it('offers a receipt again on another bind when the one it was sent on does not answer in time', async () => {
    smsc = await ClusterSmsc.start({ maxBinds: 3, receiptResponseTimeoutMs: 300 });
    const submitter = await connect(smsc.address.port);
    const silent = await connect(smsc.address.port);
    await bind(submitter);
    await bind(silent);
    // The silent bind takes the receipt and never answers: a node frozen by SIGSTOP.
    const offeredToSilent = new Promise<void>((resolve) => silent.once('deliver_sm', () => resolve()));
    const messageId = await submit(submitter, '353861234567');
    await offeredToSilent;
    const answering = await connect(smsc.address.port);
    await bind(answering);
    expect(await nextReceipt(answering)).toContain(`id:${messageId} `);
    expect(smsc.receiptTimeouts).toBe(1);
    await expect.poll(() => smsc?.receiptsAcknowledged).toBe(1);
    expect(smsc.destinationByMessageId.get(messageId)).toBe('353861234567');
  });

  it('lets the binds other than the submitter take turns at carrying receipts', async () => {
    smsc = await ClusterSmsc.start({ maxBinds: 3 });
    const [a, b, c] = [await connect(smsc.address.port), await connect(smsc.address.port), await connect(smsc.address.port)] as [Session, Session, Session];
    for (const s of [a, b, c]) await bind(s);
    const carried = { b: 0, c: 0 };
    b.on('deliver_sm', (pdu: PDU) => {
      carried.b++;
      b.send(pdu.response());
    });
    c.on('deliver_sm', (pdu: PDU) => {
      carried.c++;
      c.send(pdu.response());
    });
    for (let i = 0; i < 6; i++) await submit(a, `35386000000${i}`);
    await expect.poll(() => smsc?.receiptsAcknowledged).toBe(6);
    expect(carried).toEqual({ b: 3, c: 3 });
    expect(smsc.receiptsOnOtherBind).toBe(6);
  });
});

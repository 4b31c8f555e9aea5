/**
 * Syscalls a PDU on our SMPP client link: the submit_sm the engine hands over in one turn (one
 * claim's batch) and the deliver_sm_resp that one commit releases leave in one socket write, not
 * one write each (every write is a syscall, the largest single cost a PDU). Counted where net.Socket
 * hands the bytes to its handle, on a real bind over loopback to the test SMSC.
 */
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { PartOutcome } from '../../../src/transports/transport.js';
import { countSocketWrites, type SocketWriteCounter } from '../../support/socket-writes.js';
import { outbound, startRig, waitFor, type Rig } from './helpers.js';

const BATCH = 50;
const SUBMIT_SM = 0x00000004;
const DELIVER_SM_RESP = 0x80000005;

let rig: Rig | undefined;
let counter: SocketWriteCounter | undefined;
afterEach(async () => {
  counter?.restore();
  counter = undefined;
  await rig?.close();
  rig = undefined;
});

/** The gateway's end of the bind: the socket whose peer is the SMSC's port. */
function gatewaySide(smscPort: number): (socket: Socket) => boolean {
  return (socket) => socket.remotePort === smscPort;
}

/** command_ids of the PDUs in the bytes the SMSC read from one session, in order. */
function commandIds(raw: readonly Buffer[]): number[] {
  return raw.map((pdu) => pdu.readUInt32BE(4));
}

describe('SMPP client: PDUs of one turn in one socket write', () => {
  it(`writes the ${BATCH} submit_sm of one batch in one writev (window ${BATCH * 2})`, async () => {
    rig = await startRig({}, { window: BATCH * 2, binds: 1 });
    counter = countSocketWrites(gatewaySide(rig.smsc.address.port));
    // As the engine's lane starts one claim's messages: every submit in the same turn.
    const submitted: Promise<PartOutcome[]>[] = [];
    for (let i = 0; i < BATCH; i++) submitted.push(rig.transport.submit(outbound(`message ${i}`)));
    const outcomes = (await Promise.all(submitted)).flat();
    expect(outcomes.filter((outcome) => outcome.kind === 'accepted')).toHaveLength(BATCH);
    expect(rig.smsc.submits).toHaveLength(BATCH);
    expect(counter.tally).toMatchObject({ writes: 1, chunks: BATCH });
  });

  it(`answers ${BATCH} receipts stored by one commit with one write of ${BATCH} deliver_sm_resp`, async () => {
    rig = await startRig({}, { binds: 1 });
    const outcomes = (await Promise.all(Array.from({ length: BATCH }, (_, i) => rig!.transport.submit(outbound(`message ${i}`))))).flat();
    const ids = outcomes.map((outcome) => (outcome.kind === 'accepted' ? outcome.messageId : ''));
    expect(ids.filter((id) => id !== '')).toHaveLength(BATCH);
    // The store's group commit: every receipt waits for one commit, which settles them all in one
    // timer callback (as the engine's write batcher does).
    const waiting: Array<() => void> = [];
    const handlers = rig.handlers;
    handlers.onReceipt = (receipt) => {
      handlers.receipts.push(receipt);
      return new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (waiting.length === BATCH) setTimeout(() => waiting.forEach((commit) => commit()), 1);
      });
    };
    counter = countSocketWrites(gatewaySide(rig.smsc.address.port));
    const answered = ids.map((id) => rig!.smsc.sendReceipt(id, { stat: 'DELIVRD' }));
    expect(await Promise.all(answered)).toEqual(Array.from({ length: BATCH }, () => 0));
    expect(handlers.receipts).toHaveLength(BATCH);
    expect(counter.tally).toMatchObject({ writes: 1, chunks: BATCH });
    const session = rig.smsc.boundSessions()[0]!.id;
    const responses = rig.smsc.received.filter((pdu) => pdu.sessionId === session && pdu.command === 'deliver_sm_resp');
    expect(responses).toHaveLength(BATCH);
    expect(commandIds(responses.map((pdu) => pdu.raw)).every((id) => id === DELIVER_SM_RESP)).toBe(true);
    await waitFor(() => rig!.smsc.deliverResponses.length === BATCH, 'every deliver_sm_resp at the SMSC');
    expect(commandIds(rig.smsc.submits.map((submit) => submit.raw)).every((id) => id === SUBMIT_SM)).toBe(true);
  });
});

/**
 * OutboundMessage.mayStillSend: a submit that had to wait inside the transport
 * for a window slot asks again just before the wire, so a cluster node frozen while its submits
 * waited sends nothing its peers have sent meanwhile. Over real SMPP on loopback (TestSmsc).
 */
import { afterEach, expect, it } from 'vitest';
import { outbound, startRig, waitFor, type Rig } from './helpers.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

it('a message waiting for a window slot is answered not-sent (LEASE_LAPSED) and never reaches the SMSC once mayStillSend says no', async () => {
  let answered = 0;
  // The first submit is never answered: it holds the bind's window of 1 until its response times out.
  rig = await startRig({ onSubmit: () => (++answered === 1 ? { kind: 'never' } : { kind: 'ok' }) }, { window: 1, responseTimeoutMs: 500 });
  const transport = rig.transport;
  let mayStillSend = true;
  const first = transport.submit(outbound('first', { destination: '353870000001' }));
  await waitFor(() => rig?.smsc.submits.length === 1, 'the first submit on the wire');
  const waiting = transport.submit(outbound('second', { destination: '353870000002', mayStillSend: () => mayStillSend }));
  // The node is frozen past its lease while the second waits for the slot.
  mayStillSend = false;
  expect(await first).toEqual([expect.objectContaining({ part: 1, kind: 'temporary', status: 'RESPONSE_TIMEOUT' })]);
  expect(await waiting).toEqual([{ part: 1, kind: 'not-sent', reason: 'LEASE_LAPSED' }]);
  expect(rig.smsc.submits.map((s) => s.wire.destination_addr)).toEqual(['353870000001']);
  // The slot it took is free again: the next message goes at once.
  expect(await transport.submit(outbound('third', { destination: '353870000003', mayStillSend: () => true }))).toEqual([
    { part: 1, kind: 'accepted', messageId: expect.any(String) },
  ]);
});

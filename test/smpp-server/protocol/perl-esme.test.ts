/**
 * A third-party customer: Perl's Net::SMPP (libnet-smpp-perl) binds to the server, submits a
 * message cut with an 8-bit concatenation UDH, gets its receipt as deliver_sm and unbinds.
 */
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { killPeer, spawnPeer } from '../../support/peer-process.js';
import type { DeliverSmFields } from '../../../src/smpp-server/contracts.js';
import type { SmppListener } from '../../../src/smpp-server/protocol/listener.js';
import { ACCOUNT, PASSWORD, startTestListener, TestHandlers, waitUntil } from './helpers.js';

let listener: SmppListener | undefined;

afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

interface PerlEvent {
  event: string;
  [field: string]: unknown;
}

describe('smpp server with a Net::SMPP customer', () => {
  it('bind, submit_sm with a UDH, its receipt as deliver_sm acknowledged, unbind', async () => {
    const handlers = new TestHandlers();
    handlers.onSubmit = async () => ({ kind: 'accepted', messageId: 'c-4711' });
    listener = await startTestListener(handlers);
    const part = Buffer.concat([Buffer.from('050003a70201', 'hex'), Buffer.from('Hello from Perl', 'latin1')]);
    const child = spawnPeer('perl', [
      fileURLToPath(new URL('./perl-esme.pl', import.meta.url)), '--port', String(listener.address.port), '--system-id', ACCOUNT.systemId,
      '--password', PASSWORD, '--destination', '353871234567', '--short-message-hex', part.toString('hex'), '--esm-class', '64',
      '--parent-pid', String(process.pid),
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    const events: PerlEvent[] = [];
    const stderr: string[] = [];
    createInterface({ input: child.stdout! }).on('line', (line) => events.push(JSON.parse(line) as PerlEvent));
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
    const exited = once(child, 'exit');
    try {
      const seen = (name: string): PerlEvent | undefined => events.find((event) => event.event === name);
      await waitUntil(() => seen('submit_sm_resp') !== undefined || child.exitCode !== null, 'the Perl submit_sm_resp');
      expect(seen('bound'), stderr.join('')).toEqual({ event: 'bound', status: 0, system_id: 'smsgate' });
      expect(seen('submit_sm_resp')).toEqual({ event: 'submit_sm_resp', status: 0, message_id: 'c-4711' });
      expect(handlers.binds[0]).toMatchObject({ bindType: 'transceiver', systemId: 'cust1', systemType: 'perl', interfaceVersion: 0x34 });
      expect(handlers.submits[0]!.fields).toMatchObject({
        sourceAddr: 'PerlCo', sourceAddrTon: 5, destinationAddr: '353871234567', destAddrTon: 1, esmClass: 0x40, registeredDelivery: 1, shortMessage: part,
      });

      const text = 'id:c-4711 sub:001 dlvrd:001 submit date:2611261015 done date:2611261016 stat:DELIVRD err:000 text:Hello from P';
      const receipt: DeliverSmFields = {
        sourceAddrTon: 1, sourceAddrNpi: 1, sourceAddr: '353871234567', destAddrTon: 5, destAddrNpi: 0, destinationAddr: 'PerlCo',
        esmClass: 0x04, dataCoding: 0, shortMessageHex: Buffer.from(text, 'latin1').toString('hex'), receiptedMessageId: 'c-4711', messageState: 2,
      };
      const [session] = listener.receiversOf(ACCOUNT.id);
      expect(await session!.deliver(receipt)).toEqual({ kind: 'acknowledged' });
      await waitUntil(() => seen('unbound') !== undefined || child.exitCode !== null, 'the Perl unbind');
      expect(seen('deliver_sm'), stderr.join('')).toEqual({
        event: 'deliver_sm', esm_class: 4, data_coding: 0, short_message: receipt.shortMessageHex, receipted_message_id: 'c-4711', message_state: 2,
      });
      expect(seen('unbound')).toEqual({ event: 'unbound', status: 0 });
      await exited;
      expect(child.exitCode, stderr.join('')).toBe(0);
      await waitUntil(() => handlers.unbounds.length === 1, 'unbound');
    } finally {
      killPeer(child);
    }
  });
});

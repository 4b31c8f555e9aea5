import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/common/log.js';
import { SERVER_STATUS, type ServerSessionInfo } from '../../../src/smpp-server/contracts.js';
import type { SmppListener } from '../../../src/smpp-server/protocol/listener.js';
import { COMMAND_STATUS_CODE } from '../../../src/transports/smpp/command-status.js';
import { ACCOUNT, deferred, PackageCustomer, startTestListener, TestHandlers, waitUntil } from './helpers.js';

let listener: SmppListener | undefined;
const customers: PackageCustomer[] = [];

afterEach(async () => {
  for (const customer of customers.splice(0)) customer.close();
  await listener?.close();
  listener = undefined;
});

async function customer(): Promise<PackageCustomer> {
  const connected = await PackageCustomer.connect(listener!.address.port);
  customers.push(connected);
  return connected;
}

describe('smpp server binds', () => {
  for (const command of ['bind_transmitter', 'bind_receiver', 'bind_transceiver'] as const) {
    const bindType = command.slice('bind_'.length);

    it(`${command}: the handler decides with what the customer sent, bind_*_resp names smsgate`, async () => {
      const handlers = new TestHandlers();
      listener = await startTestListener(handlers);
      const esme = await customer();
      const response = await esme.bind(command);
      expect(response.command).toBe(`${command}_resp`);
      expect(response.command_status).toBe(COMMAND_STATUS_CODE.ESME_ROK);
      expect(response['system_id']).toBe('smsgate');
      expect(response['sc_interface_version']).toBe(0x34);
      expect(handlers.binds).toEqual([
        { bindType, systemId: ACCOUNT.systemId, password: 'pw123', systemType: 'test', interfaceVersion: 0x34, remoteAddress: '127.0.0.1' },
      ]);
      const views = listener.views();
      expect(views).toHaveLength(1);
      expect(views[0]).toMatchObject({ sessionId: 's1', systemId: 'cust1', bindType, address: '127.0.0.1', nodeId: 'node-a', windowInUse: 0, windowSize: 10, submitsPerSecond: 0 });
    });

    it(`${command} refused: bind_*_resp with the handler's status, then the connection closes`, async () => {
      const handlers = new TestHandlers();
      listener = await startTestListener(handlers);
      const esme = await customer();
      const response = await esme.bind(command, 'wrong');
      expect(response.command).toBe(`${command}_resp`);
      expect(response.command_status).toBe(SERVER_STATUS.bindFailed);
      await waitUntil(() => esme.closed, 'the refused connection to close');
      expect(listener.views()).toEqual([]);
      expect(handlers.unbounds).toEqual([]);
    });
  }

  it('a bind the handler cannot decide (it throws) is refused ESME_RSYSERR', async () => {
    const handlers = new TestHandlers();
    handlers.onBind = async () => {
      throw new Error('store down');
    };
    listener = await startTestListener(handlers);
    const esme = await customer();
    expect((await esme.bind('bind_transceiver')).command_status).toBe(SERVER_STATUS.systemError);
    await waitUntil(() => esme.closed, 'the connection to close');
  });

  it('a second bind on a bound session is answered ESME_RALYBND and the session stays bound', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers);
    const esme = await customer();
    await esme.bind('bind_transmitter');
    const second = await esme.bind('bind_receiver');
    expect(second.command).toBe('bind_receiver_resp');
    expect(second.command_status).toBe(SERVER_STATUS.alreadyBound);
    expect(handlers.binds).toHaveLength(1);
    expect((await esme.request('enquire_link')).command_status).toBe(0);
    expect(listener.views().map((view) => view.bindType)).toEqual(['transmitter']);
  });

  it('before a bind: submit_sm, query_sm and cancel_sm get ESME_RINVBNDSTS, alert_notification generic_nack ESME_RINVBNDSTS, enquire_link is answered', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers);
    const esme = await customer();
    const submit = await esme.request('submit_sm', { destination_addr: '353871234567', short_message: Buffer.from('hi'), data_coding: 0 });
    expect([submit.command, submit.command_status]).toEqual(['submit_sm_resp', SERVER_STATUS.invalidBindStatus]);
    const query = await esme.request('query_sm', { message_id: 'm1' });
    expect([query.command, query.command_status]).toEqual(['query_sm_resp', SERVER_STATUS.invalidBindStatus]);
    const cancel = await esme.request('cancel_sm', { message_id: 'm1' });
    expect([cancel.command, cancel.command_status]).toEqual(['cancel_sm_resp', SERVER_STATUS.invalidBindStatus]);
    const alert = await esme.request('alert_notification', { source_addr: '1', esme_addr: '2' });
    expect([alert.command, alert.command_status]).toEqual(['generic_nack', SERVER_STATUS.invalidBindStatus]);
    expect((await esme.request('enquire_link')).command).toBe('enquire_link_resp');
    expect(handlers.submits).toEqual([]);
    expect(handlers.queries).toEqual([]);
    expect(handlers.cancels).toEqual([]);
    // Still open: the bind is taken afterwards.
    expect((await esme.bind('bind_transceiver')).command_status).toBe(0);
  });

  it('a receiver may not submit: submit_sm_resp ESME_RINVBNDSTS, counted for the account', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers);
    const esme = await customer();
    await esme.bind('bind_receiver');
    const submit = await esme.request('submit_sm', { destination_addr: '353871234567', short_message: Buffer.from('hi'), data_coding: 0 });
    expect(submit.command_status).toBe(SERVER_STATUS.invalidBindStatus);
    const query = await esme.request('query_sm', { message_id: 'm1' });
    expect(query.command_status).toBe(SERVER_STATUS.invalidBindStatus);
    expect(handlers.submits).toEqual([]);
    expect(listener.submitCounts()).toEqual([{ systemId: 'cust1', status: 'ESME_RINVBNDSTS', count: 1 }]);
  });

  it('unbind: unbind_resp, the connection closes, handlers.unbound once', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers);
    const esme = await customer();
    await esme.bind('bind_transceiver');
    const response = await esme.request('unbind');
    expect([response.command, response.command_status]).toEqual(['unbind_resp', 0]);
    await waitUntil(() => esme.closed && handlers.unbounds.length === 1, 'close and unbound');
    expect(handlers.unbounds.map((session) => session.sessionId)).toEqual(['s1']);
    expect(listener.views()).toEqual([]);
    await listener.close();
    listener = undefined;
    expect(handlers.unbounds).toHaveLength(1);
  });

  it('a connection lost without unbind calls handlers.unbound exactly once', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers);
    const esme = await customer();
    await esme.bind('bind_receiver');
    expect(listener.accountsWithReceivers()).toEqual([ACCOUNT.id]);
    esme.close();
    await waitUntil(() => handlers.unbounds.length === 1, 'unbound');
    expect(listener.accountsWithReceivers()).toEqual([]);
    expect(listener.receiversOf(ACCOUNT.id)).toEqual([]);
    await listener.close();
    listener = undefined;
    expect(handlers.unbounds).toHaveLength(1);
  });

  it('a bind granted after the connection was lost is given back (handlers.unbound) at once', async () => {
    const handlers = new TestHandlers();
    const decision = deferred<void>();
    handlers.onBind = async (request) => {
      await decision.promise;
      return handlers.decideBind(request);
    };
    listener = await startTestListener(handlers);
    const esme = await customer();
    esme.send('bind_transceiver', { system_id: 'cust1', password: 'pw123' });
    await waitUntil(() => handlers.binds.length === 1, 'the bind to reach the handler');
    esme.close();
    await waitUntil(() => listener!.views().length === 0 && esme.closed, 'the close');
    decision.resolve();
    await waitUntil(() => handlers.unbounds.length === 1, 'the granted bind to be given back');
    expect(listener.views()).toEqual([]);
  });

  it('onReceiverBound fires for receiver and transceiver binds, not for a transmitter', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers);
    const seen: ServerSessionInfo[] = [];
    listener.onReceiverBound((session) => seen.push(session));
    for (const command of ['bind_transmitter', 'bind_receiver', 'bind_transceiver'] as const) await (await customer()).bind(command);
    expect(seen.map((session) => session.bindType)).toEqual(['receiver', 'transceiver']);
    expect(listener.receiversOf(ACCOUNT.id).map((session) => session.info.bindType).sort()).toEqual(['receiver', 'transceiver']);
    expect(listener.accountsWithReceivers()).toEqual([ACCOUNT.id]);
  });

  it('close() unbinds every bound session, waits for unbind_resp and stops listening', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers);
    const port = listener.address.port;
    const esmes = [await customer(), await customer()];
    for (const esme of esmes) {
      await esme.bind('bind_transceiver');
      esme.session.on('unbind', (pdu) => esme.session.send(pdu.response()));
    }
    await listener.close();
    listener = undefined;
    for (const esme of esmes) expect(esme.requestsOf('unbind')).toHaveLength(1);
    await waitUntil(() => esmes.every((esme) => esme.closed), 'both connections to close');
    expect(handlers.unbounds).toHaveLength(2);
    await expect(PackageCustomer.connect(port)).rejects.toThrow();
  });

  it('close() does not wait more than about 2 s for a customer that never answers unbind', async () => {
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers, { responseTimeoutMs: 60_000 });
    const esme = await customer();
    await esme.bind('bind_transceiver');
    const started = Date.now();
    await listener.close();
    listener = undefined;
    expect(esme.requestsOf('unbind')).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    await waitUntil(() => esme.closed && handlers.unbounds.length === 1, 'close and unbound');
  });

  it('never logs a password, of a bind granted, refused or failing', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'trace', destination: { write: (line: string) => lines.push(line) } });
    const handlers = new TestHandlers();
    listener = await startTestListener(handlers, {}, logger);
    const granted = await customer();
    await granted.bind('bind_transceiver', 'pw123');
    await (await customer()).bind('bind_transceiver', 'Wr0ngPass');
    handlers.onBind = async () => {
      throw new Error('store down');
    };
    await (await customer()).bind('bind_receiver', 'S3cretPw');
    await granted.request('unbind');
    await waitUntil(() => handlers.unbounds.length === 1, 'unbound');
    expect(lines.some((line) => line.includes('bind refused'))).toBe(true);
    expect(lines.some((line) => line.includes('"systemId":"cust1"'))).toBe(true);
    for (const password of ['pw123', 'Wr0ngPass', 'S3cretPw']) expect(lines.filter((line) => line.includes(password))).toEqual([]);
  });
});

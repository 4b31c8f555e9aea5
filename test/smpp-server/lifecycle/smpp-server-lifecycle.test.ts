/**
 * SmppServer is a composition seam: it takes its parts built (listener, bind gate, delivery sender,
 * status reads) and only orders them. Its parts here are small recording fakes around a real TCP
 * listener on loopback (so "listening", "closed" and "port in use" are the kernel's answers):
 * the bind gate starts before the sender and the sender before the listener; a stop closes the
 * listener (unbinding customers) before the sender and the heartbeat; the heartbeat refreshes this
 * node's sessions every third of the session timeout, one write at a time; a port in use is a
 * coded error naming smppServer.host and smppServer.port, with what had started stopped again.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../../src/common/errors.js';
import type { ServerSessionInfo, ServerSessionView } from '../../../src/smpp-server/contracts.js';
import { pollUntil } from '../../support/poll-until.js';
import { fakeSmppServer, sessionView, type FakeServer, type FakeServerOptions } from './fake-parts.js';

function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  return pollUntil(condition, timeoutMs, () => what, 5);
}

function view(sessionId: string, systemId: string, extra: Partial<ServerSessionView> = {}): ServerSessionView {
  return sessionView(sessionId, systemId, extra);
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function rig(options: FakeServerOptions = {}): FakeServer {
  const built = fakeSmppServer(options);
  cleanups.push(() => built.server.stop());
  return built;
}

describe('SmppServer start and stop', () => {
  it('starts the bind gate, then the sender, then the listener; stops the listener (customers unbound) before the sender', async () => {
    const { server, events } = rig();
    await server.start();
    expect(events).toEqual(['bindGate.start', 'sender.start', 'listener.listen']);
    const where = server.address();
    expect(where?.host).toBe('127.0.0.1');
    expect(where?.port).toBeGreaterThan(0);
    await server.stop();
    expect(events).toEqual(['bindGate.start', 'sender.start', 'listener.listen', 'listener.close', 'listener.closed', 'sender.stop']);
    expect(server.address()).toBeUndefined();
    // Closed for real: the port takes no connection any more.
    const refused = await new Promise<string>((resolve) => {
      const probe = createServer();
      probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      probe.listen(where?.port, '127.0.0.1', () => probe.close(() => resolve('free')));
    });
    expect(refused).toBe('free');
  });

  it('stops once, however often asked', async () => {
    const { server, events } = rig();
    await server.start();
    await Promise.all([server.stop(), server.stop()]);
    await server.stop();
    expect(events.filter((e) => e === 'listener.close')).toHaveLength(1);
    expect(events.filter((e) => e === 'sender.stop')).toHaveLength(1);
  });

  it('a stop asked while starting waits for the start, then undoes it', async () => {
    let release = (): void => {};
    const { server, events } = rig({ bindGateStart: () => new Promise<void>((resolve) => (release = resolve)) });
    const started = server.start();
    await until(() => events.includes('bindGate.start'), 2_000, 'the bind gate starting');
    const stopped = server.stop();
    release();
    await started;
    await stopped;
    expect(events).toEqual(['bindGate.start', 'sender.start', 'listener.listen', 'listener.close', 'listener.closed', 'sender.stop']);
  });

  it('a port in use is SMPP_SERVER_LISTEN_FAILED naming the keys, and the sender it started is stopped again', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as { port: number }).port;
    const { server, events, heartbeats } = rig({ port, sessionStaleMs: 30 });
    const failure = await server.start().then(
      () => null,
      (err: unknown) => err,
    );
    expect(isGatewayError(failure, 'SMPP_SERVER_LISTEN_FAILED')).toBe(true);
    expect((failure as Error).message).toBe(`SMPP server cannot listen on 127.0.0.1:${port} (smppServer.host, smppServer.port): EADDRINUSE`);
    expect(events).toEqual(['bindGate.start', 'sender.start', 'listener.listen', 'sender.stop']);
    await server.stop();
    expect(events.filter((e) => e === 'sender.stop')).toHaveLength(1);
    expect(heartbeats).toEqual([]);
  });

  it('a bind gate that cannot start starts nothing else', async () => {
    const { server, events } = rig({ bindGateStart: () => Promise.reject(new Error('store down')) });
    await expect(server.start()).rejects.toThrow('store down');
    expect(events).toEqual(['bindGate.start']);
    await server.stop();
    expect(events).toEqual(['bindGate.start']);
  });
});

describe('SmppServer heartbeat', () => {
  it('refreshes this node\'s sessions every third of the session timeout, and not at all without sessions', async () => {
    const { server, heartbeats, listener } = rig({ sessionStaleMs: 60 });
    expect(server.heartbeatIntervalMs).toBe(20);
    await server.start();
    // Three intervals with no session: nothing to refresh.
    await new Promise((resolve) => setTimeout(resolve, 70));
    expect(heartbeats).toEqual([]);
    listener().sessions = [view('s1', 'acme'), view('s2', 'acme')];
    await until(() => heartbeats.length >= 3, 5_000, 'three heartbeats');
    expect(heartbeats.slice(0, 3)).toEqual([['s1', 's2'], ['s1', 's2'], ['s1', 's2']]);
    await server.stop();
    const after = heartbeats.length;
    await new Promise((resolve) => setTimeout(resolve, 70));
    expect(heartbeats.length).toBe(after);
  });

  it('never has two heartbeats in flight, and a failed one does not stop the next', async () => {
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    const { server, listener, heartbeats } = rig({
      sessionStaleMs: 30,
      heartbeat: async () => {
        calls += 1;
        inFlight += 1;
        most = Math.max(most, inFlight);
        // Slower than the interval (10 ms): ticks come while it runs.
        await new Promise((resolve) => setTimeout(resolve, 35));
        inFlight -= 1;
        if (calls === 1) throw new Error('store down');
      },
    });
    await server.start();
    listener().sessions = [view('s1', 'acme')];
    await until(() => heartbeats.length >= 3, 5_000, 'three heartbeats, the first failed');
    expect(most).toBe(1);
    await server.stop();
    expect(inFlight).toBe(0);
  });
});

describe('SmppServer status', () => {
  it('lists the cluster\'s sessions, this node\'s with their window use and rate, and the deliveries waiting', async () => {
    const rows = [view('b1', 'beta', { nodeId: 'node-b', boundAt: 5 }), view('a1', 'acme', { boundAt: 9 }), view('a0', 'acme', { nodeId: 'node-b', boundAt: 2 })];
    const { server, listener } = rig({ rows });
    expect(await server.sessions()).toEqual([rows[2], rows[1], rows[0]]);
    await server.start();
    const mine = view('a1', 'acme', { boundAt: 9, windowInUse: 4, submitsPerSecond: 12.5 });
    // Bound a moment ago: the status read did not see its row yet, it is listed all the same.
    const fresh = view('c1', 'gamma', { boundAt: 20, windowInUse: 0, submitsPerSecond: 0 });
    listener().sessions = [mine, fresh];
    expect(await server.sessions()).toEqual([rows[2], mine, rows[0], fresh]);
    expect(await server.deliveriesWaiting()).toEqual(new Map([['acme', 3], ['idle', 0]]));
  });

  it('keeps the submit counts of a listener that closed, so counters never go back to zero', async () => {
    const { server, listener } = rig();
    expect(server.submitCounts()).toEqual([]);
    await server.start();
    listener().counts = [{ systemId: 'acme', status: 'ESME_ROK', count: 5 }, { systemId: 'acme', status: 'ESME_RTHROTTLED', count: 1 }];
    expect(server.submitCounts()).toEqual(listener().counts);
    await server.stop();
    expect(server.submitCounts()).toEqual([{ systemId: 'acme', status: 'ESME_ROK', count: 5 }, { systemId: 'acme', status: 'ESME_RTHROTTLED', count: 1 }]);
  });
});

describe('LocalSessionsRelay', () => {
  it('answers no sessions until the listener runs, forwards its binds while it runs, and none after it stopped', async () => {
    const { server, relay, listener } = rig();
    const told: string[] = [];
    relay.onReceiverBound((session) => told.push(session.sessionId));
    expect(relay.accountsWithReceivers()).toEqual([]);
    expect(relay.receiversOf(7)).toEqual([]);
    await server.start();
    listener().sessions = [view('s1', 'acme')];
    expect(relay.accountsWithReceivers()).toEqual([7]);
    const session: ServerSessionInfo = { sessionId: 's1', account: { id: 7, systemId: 'acme', clientId: 1, clientName: 'Acme', maxBinds: null, allowIps: [] }, bindType: 'receiver', remoteAddress: '127.0.0.1' };
    listener().bind(session);
    expect(told).toEqual(['s1']);
    const closed = listener();
    await server.stop();
    expect(relay.accountsWithReceivers()).toEqual([]);
    closed.bind(session);
    expect(told).toEqual(['s1']);
  });
});

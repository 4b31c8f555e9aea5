/**
 * "a node that loses its database connection unbinds at once", when the loss is
 * silent: the path to PostgreSQL stops carrying bytes without a reset (a partition, a dead switch),
 * so the node's lock session raises no error, while the server may end that session and hand its
 * slots to another node at any moment. The runtime pings the session at each slot sync; one that
 * does not answer within SLOT_PING_TIMEOUT_MS is given up and every bind dropped. A real SMPP bind
 * to a carrier SMSC that allows one bind, a real PostgreSQL, and a TCP relay in between that the
 * test can silence.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { SLOT_PING_TIMEOUT_MS } from '../../src/cluster/bind-slot-keeper.js';
import { ClusterRuntime } from '../../src/cluster/cluster-runtime.js';
import { createLogger, silentLogger } from '../../src/common/log.js';
import { BindSlotLocks } from '../../src/store/postgres/bind-slots.js';
import { NodeRegistry } from '../../src/store/postgres/node-registry.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { requeueExpiredNodes } from '../../src/store/postgres/node-takeover.js';
import { SmppTransport } from '../../src/transports/smpp/index.js';
import { ClusterSmsc } from '../support/cluster-smsc.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { TcpRelay } from '../support/tcp-relay.js';

const suite = usePostgresSuite();

describe('a bind slot session that goes silent', () => {
  it('drops every bind within the ping timeout, and binds again only once the server has let the old session go', async () => {
    const server = suite.server();
    const url = await server.createDatabase();
    const database = await openDatabase({ url, path: 'unused', synchronous: 'FULL', keyFile: 'unused' });
    if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
    suite.afterThisTest(() => database.close());
    const relay = await TcpRelay.start(server.host, server.port);
    suite.afterThisTest(() => relay.close());
    const relayedUrl = url.replace(`:${server.port}/`, `:${relay.port}/`);
    const smsc = await ClusterSmsc.start({ maxBinds: 1 });
    suite.afterThisTest(() => smsc.stop());

    const logs: string[] = [];
    const logger = createLogger({ level: 'warn', destination: new Writable({ write(chunk: Buffer, _e, done) { logs.push(chunk.toString('utf8')); done(); } }) });
    const runtime = new ClusterRuntime({
      registry: await NodeRegistry.join(database.pool, { leaseMs: 60_000 }),
      reapHooks: [requeueExpiredNodes],
      connectSlots: (options) => BindSlotLocks.connect(relayedUrl, options),
      wake: { parts: () => undefined, outbox: () => undefined, campaigns: () => undefined },
      logger,
      heartbeatMs: 100,
    });
    const transport = new SmppTransport(
      {
        name: 'carrier', type: 'smpp', host: smsc.address.host, port: smsc.address.port, systemId: 'esme', password: 'secret',
        bindMode: 'transceiver', binds: 1, maxPerSecond: 100, responseTimeoutMs: 2_000, reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
      },
      { slotGate: runtime.slotGate, logger: silentLogger() },
    );
    await runtime.start();
    await transport.start();
    runtime.beginSlotSync([transport]);
    suite.afterThisTest(async () => {
      await runtime.endSlotSync();
      await transport.stop(0);
      await runtime.stop();
    });
    await expect.poll(() => smsc.boundCount, { timeout: 10_000 }).toBe(1);

    relay.silence();
    const silencedAt = Date.now();
    await expect.poll(() => transport.heldSlots().length === 0 && smsc.boundCount === 0, { timeout: 10_000, interval: 20 }).toBe(true);
    // Within a sync interval, the ping timeout and the unbind.
    expect(Date.now() - silencedAt).toBeLessThan(SLOT_PING_TIMEOUT_MS + 3_000);
    expect(logs.some((line) => line.includes('bind slot session lost'))).toBe(true);

    // The server still holds the silent session's lock: the node's new session cannot take the slot.
    await expect.poll(() => runtime.stats().slotSessionOpen, { timeout: 10_000 }).toBe(true);
    expect(smsc.boundCount).toBe(0);
    // Once the old session is gone server-side, the slot comes back and the node binds again.
    relay.dropAll();
    await expect.poll(() => smsc.boundCount, { timeout: 15_000 }).toBe(1);
    expect(smsc.maxConcurrentBinds).toBe(1);
    expect(smsc.bindsRefused).toBe(0);
  });
});

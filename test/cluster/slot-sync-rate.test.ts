/**
 * "maxPerSecond is the cluster's cap": the cluster runtime syncs every SMPP
 * transport's bind slots each second, so a sync that leaves this node's slots (and so its share of
 * the rate) unchanged must leave its token bucket alone. A new bucket starts full, and one made at
 * every sync would hand out a burst beyond the cap each time. Real SMPP binds to a carrier SMSC that
 * records its busiest second, slots held as advisory locks on a real PostgreSQL, syncs every 10 ms.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/log.js';
import { BindSlotLocks } from '../../src/store/postgres/bind-slots.js';
import { SmppTransport } from '../../src/transports/smpp/index.js';
import { TokenBucket } from '../../src/transports/smpp/token-bucket.js';
import { ClusterSmsc } from '../support/cluster-smsc.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { outbound } from '../transports/smpp/helpers.js';

const suite = usePostgresSuite();
const CAP_PER_SECOND = 20;
const MESSAGES = 60;

describe('slot syncs at an unchanged share', () => {
  it("keep the transport within the cluster's maxPerSecond", async () => {
    const url = await suite.server().createDatabase();
    const smsc = await ClusterSmsc.start({ maxBinds: 2 });
    suite.afterThisTest(() => smsc.stop());
    const locks = await BindSlotLocks.connect(url, { onLost: () => undefined });
    const transport = new SmppTransport(
      {
        name: 'carrier', type: 'smpp', host: smsc.address.host, port: smsc.address.port, systemId: 'esme', password: 'secret',
        bindMode: 'transceiver', binds: 2, window: 10, maxPerSecond: CAP_PER_SECOND, responseTimeoutMs: 5_000,
      },
      { slotGate: locks, logger: silentLogger() },
    );
    suite.afterThisTest(async () => {
      await transport.stop(0);
      await locks.close();
    });
    await transport.start();
    await expect.poll(() => smsc.boundCount, { timeout: 10_000 }).toBe(2);

    let sending = true;
    const syncing = (async () => {
      while (sending) {
        expect(await transport.syncSlots()).toEqual([0, 1]);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const outcomes = await Promise.all(Array.from({ length: MESSAGES }, (_, i) => transport.submit(outbound('hello', { destination: `3538700${String(i).padStart(5, '0')}` }))));
    sending = false;
    await syncing;
    expect(outcomes.flat().every((o) => o.kind === 'accepted')).toBe(true);
    // The cap plus the bucket's burst (a tenth of a second's worth): never a fresh bucket per sync.
    expect(smsc.maxSubmitsWithin(1_000)).toBeLessThanOrEqual(CAP_PER_SECOND + TokenBucket.capacityFor(CAP_PER_SECOND));
  });
});

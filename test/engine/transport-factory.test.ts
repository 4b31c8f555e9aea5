import { describe, expect, it } from 'vitest';
import { createTransports } from '../../src/engine/transport-factory.js';
import { silentLogger } from '../../src/common/log.js';
import { SmppTransport } from '../../src/transports/smpp/index.js';
import { ModemTransport } from '../../src/transports/modem/index.js';
import { SimulatorTransport } from '../../src/transports/simulator/index.js';

describe('createTransports', () => {
  it('builds each configured transport by type, keeping names (nothing connects before start)', async () => {
    const transports = await createTransports(
      [
        { name: 'sim', type: 'simulator' },
        { name: 'carrier', type: 'smpp', host: '127.0.0.1', port: 1, systemId: 'esme', password: 'secret', bindMode: 'transceiver', window: 7, binds: 2 },
        { name: 'modems', type: 'modem', devices: [{ path: '/dev/null-modem' }] },
      ] as Parameters<typeof createTransports>[0],
      silentLogger(),
    );
    expect(transports.map((t) => [t.name, t.type])).toEqual([
      ['sim', 'simulator'],
      ['carrier', 'smpp'],
      ['modems', 'modem'],
    ]);
    expect(transports[0]).toBeInstanceOf(SimulatorTransport);
    expect(transports[1]).toBeInstanceOf(SmppTransport);
    expect(transports[2]).toBeInstanceOf(ModemTransport);
    // SMPP: the engine's queue concurrency is the window of every bind together.
    expect(transports[1]?.windowSize).toBe(14);
  });
});

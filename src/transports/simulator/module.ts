/** The simulator's entry in the transport registry (src/transports/registry.ts). */
import type { TransportModule } from '../transport-module.js';
import { simulatorConfigSchema, type SimulatorTransportConfig } from './config.js';
import { SimulatorTransport } from './simulator-transport.js';

export const simulatorModule: TransportModule<'simulator', SimulatorTransportConfig> = {
  type: 'simulator',
  schema: simulatorConfigSchema,
  create: async (entry, deps) => new SimulatorTransport(entry, deps),
};

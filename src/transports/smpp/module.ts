/** The SMPP transport's entry in the transport registry (src/transports/registry.ts). */
import type { TransportModule } from '../transport-module.js';
import { SMPP_TRANSPORT_SCHEMA, type SmppTransportConfig } from './config.js';

export const smppModule: TransportModule<'smpp', SmppTransportConfig> = {
  type: 'smpp',
  schema: SMPP_TRANSPORT_SCHEMA,
  // Loaded on demand: the smpp package is needed only when a config names an SMPP transport.
  create: async (entry, deps) => new (await import('./smpp-transport.js')).SmppTransport(entry, deps),
};

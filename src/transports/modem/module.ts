/** The modem transport's entry in the transport registry (src/transports/registry.ts). */
import type { TransportModule } from '../transport-module.js';
import { MODEM_TRANSPORT_SCHEMA, type ModemTransportConfig } from './config.js';

export const modemModule: TransportModule<'modem', ModemTransportConfig> = {
  type: 'modem',
  schema: MODEM_TRANSPORT_SCHEMA,
  // Loaded on demand: serialport is needed only when a config names a modem transport.
  create: async (entry, deps) => new (await import('./modem-transport.js')).ModemTransport(entry, deps),
};

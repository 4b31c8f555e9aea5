/**
 * Builds the configured transports through the transport registry (src/transports/registry.ts).
 * SMPP and modem code is imported only when a config names it, so the embedded default
 * (simulator) never loads the smpp package or serialport.
 */
import { GatewayError } from '../common/errors.js';
import type { Logger } from '../common/log.js';
import { TRANSPORT_MODULES, type TransportEntry } from '../transports/registry.js';
import type { TransportModuleDeps } from '../transports/transport-module.js';
import type { BindSlotGate } from '../transports/smpp/smpp-transport.js';
import type { Transport } from '../transports/transport.js';

/**
 * `slotGate`: a node of a cluster hands every SMPP transport the gate of the
 * cluster's bind slots, so `binds` counts for the whole cluster; modems and simulators stay
 * node-local and take none.
 */
export async function createTransports(configs: readonly TransportEntry[], logger: Logger, options: { slotGate?: BindSlotGate } = {}): Promise<Transport[]> {
  const transports: Transport[] = [];
  for (const config of configs) transports.push(await createTransport(config, { logger, ...(config.type === 'smpp' && options.slotGate !== undefined ? { slotGate: options.slotGate } : {}) }));
  return transports;
}

async function createTransport(config: TransportEntry, deps: TransportModuleDeps): Promise<Transport> {
  // Entries come validated from the config loader; an embedder's hand-made entry may still name no module.
  const found = TRANSPORT_MODULES.find((m) => m.type === config.type);
  if (found === undefined) {
    throw new GatewayError('CONFIG_INVALID', `transport '${String(config.name)}': unknown type '${String((config as { type: unknown }).type)}'`);
  }
  // The module's `type` equals the entry's, so the entry is that module's own config.
  return (found.create as (entry: TransportEntry, deps: TransportModuleDeps) => Promise<Transport>)(config, deps);
}

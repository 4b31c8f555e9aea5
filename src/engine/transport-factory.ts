/**
 * Builds the configured transports by type. SMPP and modem code is imported only when a config
 * names it, so the embedded default (simulator) never loads the smpp package or serialport.
 */
import type { TransportConfigBase } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../log.js';
import { SimulatorTransport, type SimulatorTransportConfig } from '../transports/simulator/index.js';
import type { Transport } from '../transports/transport.js';

export async function createTransports(configs: readonly TransportConfigBase[], logger: Logger): Promise<Transport[]> {
  const transports: Transport[] = [];
  for (const config of configs) transports.push(await createTransport(config, logger));
  return transports;
}

async function createTransport(config: TransportConfigBase, logger: Logger): Promise<Transport> {
  switch (config.type) {
    case 'simulator':
      return new SimulatorTransport(config as unknown as SimulatorTransportConfig, { logger });
    case 'smpp': {
      const { SmppTransport } = await import('../transports/smpp/index.js');
      return new SmppTransport(config as unknown as ConstructorParameters<typeof SmppTransport>[0], { logger });
    }
    case 'modem': {
      const { ModemTransport } = await import('../transports/modem/index.js');
      return new ModemTransport(config as unknown as ConstructorParameters<typeof ModemTransport>[0], { logger });
    }
    default:
      throw new GatewayError('CONFIG_INVALID', `transport '${String(config.name)}': unknown type '${String((config as { type: unknown }).type)}'`);
  }
}

/**
 * What a transport folder declares once: its `type` in the config file, the JSON
 * Schema of its entries and how to build one. The list of modules is src/transports/registry.ts;
 * the config loader and the engine's factory read it, so adding a transport touches its own folder
 * and that one list.
 */
import type { Logger } from '../common/log.js';
import type { BindSlotGate } from './smpp/smpp-transport.js';
import type { Transport } from './transport.js';

export interface TransportModuleDeps {
  logger: Logger;
  /** In a cluster: the bind slots an SMPP transport may open; other types ignore it. */
  slotGate?: BindSlotGate;
}

export interface TransportModule<Type extends string, Entry extends { name: string; type: Type }> {
  readonly type: Type;
  /** JSON Schema (draft-07, ajv 8) of one `transports[]` entry of this type. */
  readonly schema: object;
  /**
   * Builds the transport from a validated entry. Imports its heavy code (the smpp package,
   * serialport) only here, so a config that does not name this type never loads it.
   */
  create(entry: Entry, deps: TransportModuleDeps): Promise<Transport<Type>>;
}

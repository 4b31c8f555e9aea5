/**
 * The one list of transport types. The config loader builds its `type` enum and
 * per-type validators from it (src/gateway/config.ts) and the engine builds transports through it
 * (src/engine/transport-factory.ts). Order matters only for messages: it is the order the
 * "must be one of" config error lists the types in.
 */
import { modemModule } from './modem/module.js';
import { simulatorModule } from './simulator/module.js';
import { smppModule } from './smpp/module.js';
import type { TransportModule } from './transport-module.js';

export const TRANSPORT_MODULES = [simulatorModule, smppModule, modemModule] as const;

type ModuleEntry<M> = M extends TransportModule<string, infer Entry> ? Entry : never;

/** A validated `transports[]` entry of any registered type (unset optional fields stay absent). */
export type TransportEntry = ModuleEntry<(typeof TRANSPORT_MODULES)[number]>;
export type TransportType = TransportEntry['type'];

export const TRANSPORT_TYPES: readonly TransportType[] = TRANSPORT_MODULES.map((m) => m.type);

export { SimulatorTransport } from './simulator-transport.js';
export type { ForcedOutcome, SimulatorOptions } from './simulator-transport.js';
export {
  DEFAULT_SIMULATOR_OUTCOMES,
  resolveSimulatorConfig,
  SIMULATOR_DEFAULTS,
  SIMULATOR_DEMO_OUTCOMES,
  simulatorConfigSchema,
} from './config.js';
export type { ResolvedSimulatorConfig, SimulatorOutcome, SimulatorOutcomeKind, SimulatorTransportConfig } from './config.js';

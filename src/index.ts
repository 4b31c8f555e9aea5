/**
 * The embeddable gateway: `createGateway(config)` (src/gateway/create-gateway.ts, the one place a
 * gateway is wired, for SQLite or PostgreSQL) builds the store (migrations applied), auth, the
 * campaign API and its background processor, the dispatch engine with its transports, and the
 * webhook sender into one object that starts and stops as a unit. `smsgate serve` is this plus
 * signal handling. The pure core is exported beside it for programs that embed only that.
 */
export { createGateway } from './gateway/create-gateway.js';
export type { Gateway, GatewayOptions } from './gateway/running-gateway.js';
export type { ReloadOutcome, TransportDiff } from './config/reload-outcome.js';

export type { SmsGateConfig } from './gateway/config.js';
export { loadConfig, resolveConfigFromObject } from './gateway/config.js';
export { signBody, verifySignature } from './webhooks/index.js';
export type { EngineConfig } from './engine/config.js';
export { DispatchEngine } from './engine/dispatch-engine.js';
export { SIMULATOR_DEMO_OUTCOMES, SimulatorTransport } from './transports/simulator/index.js';
export type { SimulatorTransportConfig } from './transports/simulator/index.js';
export type * from './transports/transport.js';
export { GatewayError, isGatewayError } from './common/errors.js';
export { ERROR_CODE, ERROR_CODES, isErrorCode, type ErrorCode } from './common/error-codes.js';
export { createLogger, silentLogger } from './common/log.js';
export type { Logger } from './common/log.js';

export { SmppTransport, LOCAL_STATUS } from './smpp-transport.js';
export type { SmppTransportOptions } from './smpp-transport.js';
export { applySmppDefaults, resolveSmppConfig, SMPP_DEFAULTS, SMPP_TRANSPORT_SCHEMA } from './config.js';
export type {
  Gsm7DataCoding,
  ResolvedSmppTransportConfig,
  SmppBindMode,
  SmppConcatenation,
  SmppReconnectConfig,
  SmppTransportConfig,
} from './config.js';
export { COMMAND_STATUS, COMMAND_STATUS_CODE, commandStatusInfo, describeCommandStatus } from './command-status.js';
export type { CommandStatusInfo, CommandStatusKind } from './command-status.js';
export { nextReconnectDelayMs, authFailurePolicy } from './reconnect.js';
export { TokenBucket } from './token-bucket.js';
export { BindThrottle } from './throttle.js';
export { planSubmits } from './submit-pdu.js';
export { encodePartText, DATA_CODING } from './text-coding.js';

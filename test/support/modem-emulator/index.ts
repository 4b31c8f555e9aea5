export { ModemEmulator } from './modem-emulator.js';
export type { EmulatorOptions, EmulatorTiming, ReceivedSubmit } from './modem-emulator.js';
export { createPtyPair } from './pty-pair.js';
export type { PtyPair } from './pty-pair.js';
export { buildDeliverPdu, buildStatusReportPdu, encodeTimestamp } from './pdu-builders.js';

export { ModemTransport } from './modem-transport.js';
export type { ModemTransportOptions } from './modem-transport.js';
export { MODEM_DEFAULTS, deviceName, withModemDefaults } from './config.js';
export type { ModemDeviceConfig, ModemTransportConfig, ResolvedModemTransportConfig } from './config.js';
export { defaultProfilesDir, loadProfile, parseProfile } from './profile.js';
export type { ModemProfile, ModemQuirk } from './profile.js';
export type { DeviceStatus } from './device-worker.js';

export { type AppOptions, buildApp } from './app.js';
export { DEFAULT_DB, databaseUrl, serveConfig } from './config.js';
export {
  ControlChannel,
  type MapMessage,
  type MapStream,
  randomMachineKey,
  randomTailscaleNodeKey,
  serverNoiseKey,
} from './control/tailscale/control-client.js';
export { openDatabase, redact, type ServeOptions, serve, stopOnSignals } from './main.js';
export { setKeyRateLimit } from './modules/keys/keys.service.js';
export { setPlan } from './modules/network/network.service.js';
export { consoleLoginLink } from './modules/sso/console-login.js';
export { bootstrapIfEmpty, createNetwork } from './modules/tenants/tenants.service.js';
export { openStorage, type Storage } from './storage/database.js';
export { VERSION } from './version.js';

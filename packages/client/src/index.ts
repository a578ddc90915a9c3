/** @warren/client: the typed TypeScript client of the Warren API (zero runtime dependencies). */
export type {
  AuditEntryBody,
  ConnectionEntryBody,
  DeviceBody,
  DnsRecordBody,
  EventBody,
  KeyBody,
  KeyState,
  NetworkBody,
  Page,
  PolicyProblem,
  PolicyTestResultBody,
  Role,
  RouteBody,
  RouteState,
  Scope,
  UserBody,
  ValidationResultBody,
  WebhookBody,
  WebhookDeliveryBody,
} from '@warren/contract';
export { Acl, HUJSON } from './acl.js';
export { Events } from './events.js';
export {
  type RawResponse,
  type RequestOptions,
  Transport,
  type TransportOptions,
  toError,
  WarrenError,
} from './http.js';
export { allEntries, DEFAULT_POLL_INTERVAL_MS, Logs } from './log-pages.js';
export { applyNetmapDelta, isNetmapDelta, type NetmapDeltaBody } from './netmap-delta.js';
export {
  type HeartbeatResult,
  NODE_TIMEOUT_MS,
  NodeClient,
  type NodeClientOptions,
  type RegisterResult,
} from './node.js';
export { Devices, Keys, NetworkInfo, Routes, Users } from './resources.js';
export type * from './types.js';
export { VERSION } from './version.js';
export { Warren, type WarrenOptions } from './warren.js';
export { type CreateWebhookInput, type DeliveryQuery, type UpdateWebhookInput, Webhooks } from './webhooks.js';

/**
 * What every module receives: storage, the clock, the audit log and the rate limiter.
 * Also the request decorations set by the authentication hooks.
 */
import type { Scope, ValidationResultBody } from '@warren/contract';
import type { RateLimiter } from '../edge/rate-limiter.js';
import type { AuditLog } from '../http/audit.js';
import type { LogIds } from '../lib/log-ids.js';
import type { Clock } from '../lib/time.js';
import type { Db, Dialect } from '../storage/database.js';

export interface Settings {
  /** Requests per minute of an API key without its own rateLimit. */
  apiRateLimit: number;
  /** Requests per minute of one client address without a valid key. */
  anonymousRateLimit: number;
  /** Node-protocol calls per minute of one device. */
  deviceRateLimit: number;
  /** Registrations per minute through one auth key. */
  enrollRateLimit: number;
  /** Days a premium network keeps its connection log (default: the plan's 90). */
  premiumLogRetentionDays?: number;
  /** How often the connection log's retention sweep runs (default 10 minutes). */
  connectionRetentionIntervalMs?: number;
  /** How often presence and key-expiry transitions are looked for (default 5 s). */
  eventDetectorIntervalMs?: number;
  /** Webhook retry delays (default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 24 h); tests shorten them. */
  webhookRetryScheduleMs?: readonly number[];
  /** Deliver to loopback, private and link-local addresses, and over plain http (development, tests). */
  webhooksAllowPrivate?: boolean;
  /** How long a delivery may take before it counts as failed (default 15 s). */
  webhookTimeoutMs?: number;
  /**
   * The address browsers reach the server at (`https://warren.example.com`), for the single
   * sign-on redirect URI and sign-in links; default: the scheme and host of each request.
   */
  publicUrl?: string;
  /** Accept `http://` OpenID issuers (development and tests only; never in production). */
  ssoAllowHttp?: boolean;
  /** The DERP map Tailscale clients get (tailcfg.DERPMap); none when absent. */
  derpMap?: unknown;
  /** A Tailscale control channel with no traffic either way this long is closed (default 2 minutes). */
  controlIdleTimeoutMs?: number;
  /** How long validating one policy may take before it is refused as too complex (default 1.5 s). */
  policyTimeBudgetMs?: number;
}

export const DEFAULT_SETTINGS: Settings = {
  apiRateLimit: 100,
  anonymousRateLimit: 100,
  deviceRateLimit: 300,
  enrollRateLimit: 20_000,
};

export interface AppContext {
  db: Db;
  dialect: Dialect;
  clock: Clock;
  audit: AuditLog;
  limiter: RateLimiter;
  /** Opaque ids and cursors of the logs. */
  logIds: LogIds;
  settings: Settings;
  /** Policy validation off the event loop, within the time budget (modules/acl/policy-pool.ts). */
  policies: { validate(text: string): Promise<ValidationResultBody> };
}

/**
 * The caller of a management endpoint: an API key of one network, or a person's console
 * session (then `keyId` is null, `keyName` is their login name and `user` says who).
 */
export interface ApiPrincipal {
  networkId: string;
  keyId: string | null;
  /** The caller's name: the key's, or the signed-in user's login name. */
  keyName: string;
  scopes: Scope[];
  expiresAt: number;
  user?: SessionPrincipal;
}

/** The person behind a console session. */
export interface SessionPrincipal {
  id: string;
  loginName: string;
  role: string;
  csrfToken: string;
  /** When the session ends at the latest (12 hours after sign-in). */
  sessionExpiresAt: number;
}

/** The caller of a node-protocol endpoint: an enrolled device. */
export interface DevicePrincipal {
  networkId: string;
  deviceId: string;
}

export type AuthMode = 'api' | 'none' | 'node';

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
  }
  interface FastifyRequest {
    principal: ApiPrincipal | null;
    device: DevicePrincipal | null;
    /** Network of the caller, for the audit entry (set by whichever authentication ran). */
    networkId: string | null;
    /** Set once the call's audit entry was written inside the transaction of its change. */
    audited: boolean;
  }
  interface FastifyContextConfig {
    /** Scope that suffices for this route besides `all` (GETs also accept `read`); `any`: every valid key. */
    scope?: Scope | 'any';
    /** Who may call: API keys (default), anyone, or devices (node protocol; its plugin authenticates). */
    auth?: AuthMode;
    /** `false`: calls are not audited (probes that devices make every few seconds). */
    audit?: false;
  }
}

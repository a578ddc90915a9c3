/**
 * What every module receives: storage, the clock, the audit log and the rate limiter. The
 * last two are named here by what callers need of them; their implementations live at the
 * request boundary (http/audit.ts, edge/rate-limiter.ts) and app.ts hands them in.
 */
import type { ValidationResultBody } from '@warren/contract';
import type { LogIds } from '../lib/log-ids.js';
import type { Clock } from '../lib/time.js';
import type { ChangeChannel } from '../storage/change-signal.js';
import type { Db, Dialect } from '../storage/database.js';
import type { AuditRow } from './audit-entries.js';

export interface Settings {
  /** Requests per minute of an API key without its own rateLimit. */
  apiRateLimit: number;
  /**
   * Requests per minute of one person's console sessions. A page of the console makes several
   * calls (the page's list, its filters' lookups, the session check), so a person clicking
   * through it needs more than a script's default; API keys keep apiRateLimit.
   */
  sessionRateLimit: number;
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
  /** WARREN_PUBLIC_URL, without a trailing slash (config.ts). */
  publicUrl?: string;
  /** Accept `http://` OpenID issuers (development and tests only; never in production). */
  ssoAllowHttp?: boolean;
  /** The DERP map Tailscale clients get (tailcfg.DERPMap); none when absent. */
  derpMap?: unknown;
  /** A Tailscale control channel with no traffic either way this long is closed (default 2 minutes). */
  controlIdleTimeoutMs?: number;
  /** Processor time validating one policy may use before it is refused as too complex (default 1.5 s). */
  policyTimeBudgetMs?: number;
}

export const DEFAULT_SETTINGS: Settings = {
  apiRateLimit: 100,
  sessionRateLimit: 600,
  anonymousRateLimit: 100,
  deviceRateLimit: 300,
  enrollRateLimit: 20_000,
};

/** The audit entries of calls that change nothing, written in batches (http/audit.ts). */
export interface AuditQueue {
  enqueue(row: AuditRow): void;
  /** Counts a use of an API key (its `uses` and `lastUsed`), written with the next batch. */
  noteKeyUse(keyId: string, at: number): void;
  /** Writes everything queued so far; resolves when it is committed. */
  flush(): Promise<void>;
  /** Resolves once everything queued before the call is committed (one write shared by concurrent callers). */
  settled(): Promise<void>;
  /** Writes the queued entries of one network now, in a transaction of their own. */
  recordNetwork(networkId: string): Promise<void>;
  close(): Promise<void>;
  /** Told of a batch that could not be written (the calls it recorded were already answered). */
  onError?: (error: unknown) => void;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a slot frees up (≥ 1 when refused). */
  resetSeconds: number;
}

/** At most `limit` hits per bucket in any 60-second window, shared by every instance. */
export interface RateLimiter {
  hit(bucket: string, limit: number): Promise<RateLimitDecision>;
  /** The same decision without a promise, where the limiter counts in memory (SQLite). */
  hitNow?(bucket: string, limit: number): RateLimitDecision;
  close(): void;
}

/**
 * Where a policy text being validated comes from: `asTailscale`, sent through Tailscale's API
 * (/api/v2), whose tools mean their files as Tailscale reads them.
 */
export interface PolicyTextOrigin {
  asTailscale?: boolean;
}

export interface AppContext {
  db: Db;
  dialect: Dialect;
  /** Where this process hears of committed changes to networks' epochs (storage/change-signal.ts). */
  changes: ChangeChannel;
  clock: Clock;
  audit: AuditQueue;
  limiter: RateLimiter;
  /** Opaque ids and cursors of the logs. */
  logIds: LogIds;
  settings: Settings;
  /**
   * Policy validation off the event loop, within the CPU budget (modules/acl/policy-pool.ts).
   * `prepare` also hands back, for a valid text, what the worker read from it: its shape belongs
   * to the policy engine, which the core does not know, so the acl module that asks reads it.
   */
  policies: {
    /** `asTailscale`: a text sent through Tailscale's API, read as Tailscale reads it (policy/validate.ts). */
    validate(text: string, origin?: PolicyTextOrigin): Promise<ValidationResultBody>;
    prepare(text: string, origin?: PolicyTextOrigin): Promise<ValidationResultBody & { prepared?: unknown }>;
  };
}

/** A device of a network, as the logs it reports know it. */
export interface DeviceRef {
  networkId: string;
  deviceId: string;
}

/** The caller of a node-protocol endpoint: an enrolled device. */
export interface DevicePrincipal extends DeviceRef {
  /** The device's name when the call was made: the `actor.name` of the events it causes. */
  name: string;
}

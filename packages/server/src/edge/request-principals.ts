/**
 * What authentication leaves on a request: who called (an API key, a person's console session,
 * or a device) and for which network, and what each route declares about its callers.
 */
import type { Scope, TailscaleResource } from '@warren/contract';
import type { AppContext, DevicePrincipal } from '../core/context.js';
import type { ReadStamp } from '../storage/compiled-query.js';

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
  /** An OAuth client's access token: its Tailscale scopes and the client's tags. */
  oauth?: OAuthGrant;
  /**
   * PostgreSQL: the network's read stamp, read with the call's API key after the call arrived;
   * the reads that take it may answer from what was kept at that stamp (storage/compiled-query.ts).
   */
  readStamp?: ReadStamp;
}

/** What an OAuth access token carries beyond the Warren scopes it maps to. */
export interface OAuthGrant {
  scopes: string[];
  tags: string[];
  /** When the client expires (the API key that made it does); Number.MAX_SAFE_INTEGER: never. */
  clientExpiresAt: number;
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
    /**
     * The key a call that was refused or failed is recorded under (its audit entry): a revoked or
     * expired API key (or OAuth client), or the auth key of a registration that enrolled nothing.
     */
    refusedKey: { keyId: string; keyName: string | null } | null;
    /** Set once the call's audit entry was written (inside the transaction of its change) or queued. */
    audited: boolean;
    /** The handler has answered (the answer is on its way, or the client has gone). */
    answered: boolean;
    /** The client closed the connection before the answer was given: the entry waits for it. */
    callerLeft: boolean;
  }
  interface FastifyContextConfig {
    /**
     * Scope that suffices for this route besides `all` (GETs also accept `read`); `any`: any
     * scope at all (every API key has one; a member's session has none); `self`: every caller,
     * asking about itself.
     */
    scope?: Scope | 'any' | 'self';
    /**
     * /api/v2: the Tailscale resource an OAuth token needs (its `…:read` for a GET); a token
     * is checked against this instead of `scope`. Several: any one of them.
     */
    tailscaleScope?: TailscaleResource | readonly TailscaleResource[];
    /** Who may call: API keys (default), anyone, or devices (node protocol; its plugin authenticates). */
    auth?: AuthMode;
    /** `false`: calls are not audited (probes that devices make every few seconds). */
    audit?: false;
    /** Content codings the route decodes itself (http/codings.ts refuses any other). */
    contentCodings?: readonly string[];
  }
}

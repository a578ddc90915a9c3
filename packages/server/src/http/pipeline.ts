/**
 * The request pipeline of the management API, in order: request id → request line (505, 414,
 * 400) → Host, repeated Authorization or Content-Type (400) → content and transfer codings, expectations (415, 501, 417;
 * these and Host still authenticate a key sent with them, to record and count the call) →
 * authenticate (401) → rate limit (429) → scope (403) → body validation (400) → handler; and,
 * after the response, the audit entry of every call that did not write its own — also of a
 * call whose client closed the connection before its answer, which Fastify's onResponse never
 * sees.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimitDecision } from '../core/context.js';
import { bearerToken } from '../edge/bearer-token.js';
import { rateLimited, setRateLimitHeaders } from '../edge/rate-limit-reply.js';
import { limitByAddress } from './address-limit.js';
import { auditRow } from './audit.js';
import { type Authenticated, authenticateApiKey, keptApiKey, refusedKeyOf, requireScope } from './authenticate.js';
import { checkCodings } from './codings.js';
import { checkHostHeader } from './host-header.js';
import { confineToOwnDevices, isOwnDeviceCall } from './member-devices.js';
import { ApiError, unauthenticated } from './problem.js';
import { checkRepeatedHeaders } from './repeated-headers.js';
import { checkRequestLine, SERVER_METHODS } from './request-line.js';
import { routeOf } from './route-of.js';
import { authModeOf } from './route-table.js';
import { authenticateSession, wantsSession } from './session-auth.js';

/** The call a response answers, for the listener every response shares (onResponseClose). */
const CALL = Symbol('call');
type AnsweringResponse = ServerResponse & { [CALL]?: FastifyRequest };

/** Routes that are not API calls: probes would otherwise flood the audit log. */
const UNAUDITED = new Set(['/healthz', '/readyz']);

function unaudited(request: FastifyRequest): boolean {
  const route = routeOf(request);
  return route.config?.audit === false || UNAUDITED.has(route.url ?? '');
}

/**
 * Bearer API key → `request.principal`, counted against the key's rate limit; a caller
 * without a valid key is counted against its address's limit and refused (401, or 429).
 */
export async function authenticateCall(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { ctx } = request.server;
  const now = ctx.clock.now();
  let authenticated: Authenticated;
  try {
    authenticated = await authenticateApiKey(ctx, bearerToken(request), now);
  } catch (error) {
    // A revoked or expired key is still known: the call goes to its network's audit log.
    const refused = refusedKeyOf(error);
    if (refused) {
      request.networkId = refused.networkId;
      request.refusedKey = refused;
    }
    return refuseByAddress(request, reply, error);
  }
  const { principal, counted } = authenticated;
  // On PostgreSQL the key's own statement counted the hit (authenticate.ts).
  const decision =
    counted ?? (await ctx.limiter.hit(`key:${principal.keyId}`, principal.rateLimit ?? ctx.settings.apiRateLimit));
  admitKey(request, reply, principal, decision, now);
}

/** A call without a valid key: counted against its address's limit, then refused (or 429). */
async function refuseByAddress(request: FastifyRequest, reply: FastifyReply, refusal: unknown): Promise<never> {
  await limitByAddress(request, reply);
  throw refusal;
}

/**
 * The common call decided without a promise: a key kept since the last commit and a limiter
 * counting in memory (SQLite). False when the call needs `authenticateCall` (a key not kept,
 * one to refuse, another credential, or PostgreSQL); it then decides everything anew.
 */
function authenticateCallNow(request: FastifyRequest, reply: FastifyReply): boolean {
  const { ctx } = request.server;
  if (!ctx.limiter.hitNow) return false;
  const now = ctx.clock.now();
  const principal = keptApiKey(ctx.db, bearerToken(request), now);
  if (!principal) return false;
  const decision = ctx.limiter.hitNow(`key:${principal.keyId}`, principal.rateLimit ?? ctx.settings.apiRateLimit);
  admitKey(request, reply, principal, decision, now);
  return true;
}

/** The key's caller on the request, its limit in the headers, refused (429) past it. */
function admitKey(
  request: FastifyRequest,
  reply: FastifyReply,
  principal: Authenticated['principal'],
  decision: RateLimitDecision,
  now: number,
): void {
  const { ctx } = request.server;
  request.principal = principal;
  request.networkId = principal.networkId;
  setRateLimitHeaders(reply, decision);
  if (!decision.allowed) throw rateLimited(decision, `API key "${principal.keyName}"`);
  // Uses are counted on keys; an OAuth client has no such counters.
  if (!principal.oauth) ctx.audit.noteKeyUse(principal.keyId, now);
}

/**
 * What the headers ask that the server refuses whoever sends it: Host (400), repeated
 * Authorization or Content-Type (400), codings and expectations (415, 501, 417). Attributable
 * when the credential is not in doubt (one Authorization header).
 */
function headerRefusal(request: FastifyRequest): { error: unknown; attributable: boolean } | undefined {
  let host: unknown;
  try {
    checkHostHeader(request);
  } catch (error) {
    host = error;
  }
  try {
    checkRepeatedHeaders(request);
  } catch (error) {
    return { error: host ?? error, attributable: false };
  }
  if (host) return { error: host, attributable: true };
  try {
    checkCodings(request);
  } catch (error) {
    return { error, attributable: true };
  }
  return undefined;
}

/**
 * What the request line (http/request-line.ts) or the headers ask that the server refuses
 * whoever sends it. A bad request line (a NUL in the target, one over 8 KiB) is as attributable
 * as a bad header: the key is not in doubt unless Authorization is repeated, so the call goes to
 * the key's network's audit log and rate limit, as the router's refusals do.
 */
function requestRefusal(request: FastifyRequest): { error: unknown; attributable: boolean } | undefined {
  let line: unknown;
  try {
    checkRequestLine(request);
  } catch (error) {
    line = error;
  }
  const headers = headerRefusal(request);
  if (line === undefined) return headers;
  return { error: line, attributable: headers?.attributable ?? true };
}

/**
 * A refusal of a malformed request that comes with a key: the answer is the same with or
 * without one, but a valid key still has the call recorded in its network's audit log, counted
 * against its rate limit and answered with its RateLimit headers, as every call is (and as the
 * router's refusals are, framework-errors.ts). An exhausted limit answers 429 instead.
 */
async function attributeRefusal(request: FastifyRequest, reply: FastifyReply, refusal: unknown): Promise<never> {
  try {
    await authenticateCall(request, reply);
  } catch (other) {
    if (other instanceof ApiError && other.code === 'rate_limited') throw other;
  }
  throw refusal;
}

/** The scope the route needs, once the caller is known. */
function authorize(request: FastifyRequest): void {
  if (request.is404) return;
  // A member holds no scope, yet may read and delete their own devices (confined below).
  if (isOwnDeviceCall(request)) return;
  const config = routeOf(request).config;
  requireScope(request.principal!, request.method, config?.scope, config?.tailscaleScope);
}

export function registerPipeline(app: FastifyInstance): void {
  const { ctx } = app;
  app.decorateRequest('principal', null);
  app.decorateRequest('device', null);
  app.decorateRequest('networkId', null);
  app.decorateRequest('refusedKey', null);
  app.decorateRequest('audited', false);
  app.decorateRequest('answered', false);
  app.decorateRequest('callerLeft', false);
  app.decorateRequest('matchedRoute', null);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  // A callback, not an async function: a SQLite call with a kept key is decided without a
  // promise (authenticateCallNow); only the calls that read or wait take one.
  app.addHook('onRequest', (request, reply, done) => {
    let waiting: Promise<void> | undefined;
    (reply.raw as AnsweringResponse)[CALL] = request;
    reply.raw.on('close', onResponseClose);
    try {
      reply.header('X-Request-Id', request.id);
      if (closing) {
        throw new ApiError(
          'unavailable',
          'the server is shutting down; retry on another instance',
          {},
          { Connection: 'close' },
        );
      }
      const refused = requestRefusal(request);
      if (refused) {
        if (authModeOf(routeOf(request).config) !== 'api' || wantsSession(request)) throw refused.error;
        // A caller in doubt (two Authorization headers) is nobody's key: its address's call.
        const refusing = refused.attributable
          ? attributeRefusal(request, reply, refused.error)
          : refuseByAddress(request, reply, refused.error);
        refusing.then(undefined, done);
        return;
      }
      if (request.raw.url === '*') {
        // OPTIONS * (the only method the request line check lets through with it) asks what
        // the server implements, not a resource: it needs no key and reveals nothing.
        reply.code(204).header('Allow', SERVER_METHODS).send();
        return;
      }
      // Decided by the route the router matched, never by how the URL is spelled: `/%761/…`,
      // `/v%31/…` and `http://host/v1/…` reach the same handlers as `/v1/…`. An unmatched
      // path is an API call too (401 without a key, 404 with one), so probing reveals nothing.
      // Node routes authenticate in their own onRequest hook, which runs after this one.
      if (authModeOf(routeOf(request).config) === 'api') {
        // A /v1 call without a bearer token may come from the console, with its session cookie.
        if (wantsSession(request)) waiting = authenticateSession(request, reply);
        else if (authenticateCallNow(request, reply)) authorize(request);
        else waiting = authenticateCall(request, reply);
      }
    } catch (error) {
      done(error as Error);
      return;
    }
    if (!waiting) {
      done();
      return;
    }
    waiting.then(() => authorize(request)).then(() => done(), done);
  });

  // The last word before any handler: whatever the hooks above did or did not do, a
  // handler of an API route never runs without a key's principal, nor a node route's
  // without a device or auth key.
  // Callbacks, not async functions: both run on every call, and only a member's own-device
  // call waits for anything (a promise per hook was a microtask hop for nothing).
  app.addHook('preHandler', (request, _reply, done) => {
    const route = routeOf(request);
    const mode = authModeOf(route.config);
    const authenticated = mode === 'none' || (mode === 'api' ? request.principal !== null : request.networkId !== null);
    if (!authenticated) {
      request.log.error({ route: route.url }, 'refused a handler call that was not authenticated');
      done(unauthenticated('this call needs a credential'));
      return;
    }
    if (!isOwnDeviceCall(request)) {
      done();
      return;
    }
    confineToOwnDevices(request).then(() => done(), done);
  });

  /**
   * The one 'close' listener of every response (a response closes once): a closure and a
   * once() wrapper per call cost more than the call's own check.
   */
  function onResponseClose(this: AnsweringResponse): void {
    const request = this[CALL];
    if (this.writableFinished || !request) return;
    // Gone before the answer was written: no onResponse will follow.
    if (request.answered) record(request, this.statusCode);
    else request.callerLeft = true;
  }

  /** Queues the entry of a call that did not write its own, once, whichever way it ended. */
  function record(request: FastifyRequest, status: number): void {
    if (request.audited || (!request.is404 && unaudited(request))) return;
    request.audited = true;
    ctx.audit.enqueue(auditRow(request, status, ctx.clock.now()));
  }

  // The handler's answer, with its status: the moment to record a call whose client has gone.
  app.addHook('onSend', (request, reply, payload, done) => {
    request.answered = true;
    if (request.callerLeft) record(request, reply.statusCode);
    done(null, payload);
  });

  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done) => {
    record(request, reply.statusCode);
    done();
  });
}

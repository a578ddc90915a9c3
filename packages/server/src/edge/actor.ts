/** The Actor of an HTTP call: who called (an API key or a device), from where, and how. */
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../core/actor.js';
import { redactSecrets } from '../lib/secrets.js';
import { clientAddress } from './client-address.js';

/** Longer targets are cut: an entry records the call, not whatever a client chose to send. */
const MAX_PATH = 2048;

/** The scheme and authority of an absolute-form target (`http://host:port`), served like its path. */
const SCHEME_AND_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/[^/?]*/i;

/**
 * The path an entry records of a request target: the path alone (an absolute-form target's
 * scheme and authority dropped, as the call is the same), no query string, no secret, cut to
 * MAX_PATH.
 */
export function callPath(target: string): string {
  const origin = target.startsWith('/') ? target : target.replace(SCHEME_AND_AUTHORITY, '') || '/';
  const query = origin.indexOf('?');
  return redactSecrets((query === -1 ? origin : origin.slice(0, query)).slice(0, MAX_PATH));
}

/** What any actor of an HTTP call carries: the call's id, address, and request line. */
export function callOf(request: FastifyRequest, status: number): Pick<Actor, 'requestId' | 'clientAddr' | 'request'> {
  return {
    requestId: request.id,
    clientAddr: clientAddress(request),
    request: {
      method: request.method,
      path: callPath(request.url),
      status,
      onAudited: () => {
        request.audited = true;
      },
      recordEarlierCalls: (networkId) => request.server.ctx.audit.recordNetwork(networkId),
    },
  };
}

/** `status`: what the call answers when its change commits (the audit entry records it). */
export function actorOf(request: FastifyRequest, status = 200): Actor {
  const base = callOf(request, status);
  const { principal, device } = request;
  if (principal?.user) {
    const { user } = principal;
    // What a person may grant (a key they create) is what their role may do, for as long as it lasts.
    return {
      ...base,
      networkId: principal.networkId,
      type: 'user',
      id: user.id,
      name: user.loginName,
      grant: { scopes: principal.scopes, expiresAt: Number.MAX_SAFE_INTEGER },
    };
  }
  if (principal) {
    return {
      ...base,
      networkId: principal.networkId,
      type: 'key',
      id: principal.keyId,
      name: principal.keyName,
      // An OAuth token lasts an hour, its client until deleted or its maker's expiry: what it
      // creates may outlive the token, not the client.
      grant: principal.oauth
        ? { scopes: principal.scopes, expiresAt: principal.oauth.clientExpiresAt, oauth: principal.oauth }
        : { scopes: principal.scopes, expiresAt: principal.expiresAt },
    };
  }
  if (device) return { ...base, networkId: device.networkId, type: 'device', id: device.deviceId, name: device.name };
  // Enrollment: an auth key authenticated the call, and its device does not exist yet.
  if (request.networkId) return { ...base, networkId: request.networkId, type: 'device', id: null, name: null };
  throw new Error('actorOf: the call is not authenticated');
}

/** The Actor of an HTTP call: who called (an API key or a device), from where, and how. */
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../core/actor.js';
import { callPath } from './audit.js';

/** `status`: what the call answers when its change commits (the audit entry records it). */
export function actorOf(request: FastifyRequest, status = 200): Actor {
  const base = {
    requestId: request.id,
    clientAddr: request.ip,
    request: {
      method: request.method,
      path: callPath(request.url),
      status,
      onAudited: () => {
        request.audited = true;
      },
    },
  };
  const { principal, device } = request;
  if (principal) {
    return {
      ...base,
      networkId: principal.networkId,
      type: 'key',
      id: principal.keyId,
      name: principal.keyName,
      grant: { scopes: principal.scopes, expiresAt: principal.expiresAt },
    };
  }
  if (device) return { ...base, networkId: device.networkId, type: 'device', id: device.deviceId, name: null };
  // Enrollment: an auth key authenticated the call, and its device does not exist yet.
  if (request.networkId) return { ...base, networkId: request.networkId, type: 'device', id: null, name: null };
  throw new Error('actorOf: the call is not authenticated');
}

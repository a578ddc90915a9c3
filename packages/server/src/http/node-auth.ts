/**
 * Authentication of the node protocol: `Authorization: Bearer wrn_node_…` → the device.
 * The credential is looked up by its SHA-256 on the device row itself, so deleting the
 * device (or re-enrolling it, which replaces the hash) refuses the old credential at once.
 * Devices are rate-limited per device, not per API key.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashSecret, isWellFormedSecret, sameHash } from '../lib/secrets.js';
import { compiledQuery } from '../storage/compiled-query.js';
import { bearerToken } from './authenticate.js';
import { rateLimited, setRateLimitHeaders } from './pipeline.js';
import { unauthenticated } from './problem.js';

/** Run on every node call (heartbeats of the whole fleet), so built once (storage/compiled-query.ts). */
const deviceByTokenHash = compiledQuery((db, p: { hash: string }) =>
  db
    .selectFrom('devices')
    .leftJoin('users', 'users.id', 'devices.user_id')
    .select(['devices.id', 'devices.network_id', 'devices.node_token_hash', 'users.status as user_status'])
    .where('devices.node_token_hash', '=', p.hash),
);

export async function authenticateDevice(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { ctx } = request.server;
  const token = bearerToken(request);
  if (!token || !isWellFormedSecret('node', token)) {
    const decision = await ctx.limiter.hit(`addr:${request.ip}`, ctx.settings.anonymousRateLimit);
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) throw rateLimited(decision, `client ${request.ip}`);
    throw unauthenticated('send the node credential as "Authorization: Bearer wrn_node_…"');
  }
  const hash = hashSecret(token);
  const [device] = await deviceByTokenHash(ctx.db, { hash });
  if (!device || !sameHash(device.node_token_hash, hash)) {
    throw unauthenticated('the node credential is not valid (the device was deleted or re-enrolled)');
  }
  // A suspended user's devices stay enrolled but may not connect until the user is restored.
  if (device.user_status === 'suspended') {
    throw unauthenticated(`the user of device ${device.id} is suspended`);
  }
  request.device = { networkId: device.network_id, deviceId: device.id };
  request.networkId = device.network_id;
  const decision = await ctx.limiter.hit(`dev:${device.id}`, ctx.settings.deviceRateLimit);
  setRateLimitHeaders(reply, decision);
  if (!decision.allowed) throw rateLimited(decision, `device ${device.id}`);
}

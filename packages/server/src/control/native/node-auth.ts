/**
 * Authentication of the node protocol: `Authorization: Bearer wrn_node_…` → the device.
 * The credential is looked up by its SHA-256 on the device row itself, so deleting the
 * device (or re-enrolling it, which replaces the hash) refuses the old credential at once.
 * Devices are rate-limited per device, not per API key.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, RateLimitDecision } from '../../core/context.js';
import { unauthenticated } from '../../core/errors.js';
import { bearerToken } from '../../edge/bearer-token.js';
import { clientAddress } from '../../edge/client-address.js';
import { rateLimited, setRateLimitHeaders } from '../../edge/rate-limit-reply.js';
import { decisionOfHit, type HitRow, WINDOW_MS } from '../../edge/rate-limiter.js';
import { hashSecret, isWellFormedSecret, sameHash } from '../../lib/secrets.js';
import { compiledQuery } from '../../storage/compiled-query.js';
import { runPrepared } from '../../storage/pg-statements.js';

/** Run on every node call (heartbeats of the whole fleet), so built once (storage/compiled-query.ts). */
const deviceByTokenHash = compiledQuery((db, p: { hash: string }) =>
  db
    .selectFrom('devices')
    .leftJoin('users', 'users.id', 'devices.user_id')
    .select([
      'devices.id',
      'devices.network_id',
      'devices.name',
      'devices.node_token_hash',
      'users.status as user_status',
    ])
    .where('devices.node_token_hash', '=', p.hash),
);

/**
 * PostgreSQL: the credential's device and its rate-limit hit (rate-limiter.ts, migration 015)
 * in one statement, one round trip fewer on every node call. The hit is counted only for a
 * device found whose user is not suspended, as when the two are asked one after the other:
 * `offset 0` keeps the subquery from being merged into the join, where its condition would
 * filter the function's row after the call instead of deciding whether to call it.
 */
const DEVICE_AND_HIT = `
  select d.id, d.network_id, d.name, d.node_token_hash, u.status as user_status, h.out_live, h.out_oldest, h.out_allowed
  from devices d
  left join users u on u.id = d.user_id
  left join lateral (
    select * from rate_limit_hit('dev:' || d.id, $2, $3, $4) where u.status is distinct from 'suspended' offset 0
  ) h on true
  where d.node_token_hash = $1`;

type DeviceRow = Awaited<ReturnType<typeof deviceByTokenHash>>[number];

/** The credential's device and, on PostgreSQL, the decision on its hit, or nothing when unknown. */
async function credentialDevice(
  ctx: AppContext,
  hash: string,
): Promise<{ device?: DeviceRow; decision?: RateLimitDecision }> {
  if (ctx.dialect === 'postgres') {
    const now = ctx.clock.now();
    const limit = ctx.settings.deviceRateLimit;
    const prepared = runPrepared(ctx.db, 'warren_device_and_hit', DEVICE_AND_HIT, [hash, now, now - WINDOW_MS, limit]);
    if (prepared) {
      const [row] = (await prepared) as (DeviceRow & Partial<HitRow>)[];
      const counted = row?.out_allowed != null;
      return { device: row, decision: counted ? decisionOfHit(row as HitRow, limit, now) : undefined };
    }
  }
  const [device] = await deviceByTokenHash(ctx.db, { hash });
  return { device };
}

export async function authenticateDevice(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { ctx } = request.server;
  const token = bearerToken(request);
  if (!token || !isWellFormedSecret('node', token)) {
    const decision = await ctx.limiter.hit(`addr:${clientAddress(request)}`, ctx.settings.anonymousRateLimit);
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) throw rateLimited(decision, `client ${clientAddress(request)}`);
    throw unauthenticated('send the node credential as "Authorization: Bearer wrn_node_…"');
  }
  const hash = hashSecret(token);
  const { device, decision: counted } = await credentialDevice(ctx, hash);
  if (!device || !sameHash(device.node_token_hash, hash)) {
    throw unauthenticated('the node credential is not valid (the device was deleted or re-enrolled)');
  }
  // Known from here on: even the refusal below is in its network's audit log, naming the device.
  request.device = { networkId: device.network_id, deviceId: device.id, name: device.name };
  request.networkId = device.network_id;
  // A suspended user's devices stay enrolled but may not connect until the user is restored.
  if (device.user_status === 'suspended') {
    throw unauthenticated(`the user of device ${device.id} is suspended`);
  }
  const decision = counted ?? (await ctx.limiter.hit(`dev:${device.id}`, ctx.settings.deviceRateLimit));
  setRateLimitHeaders(reply, decision);
  if (!decision.allowed) throw rateLimited(decision, `device ${device.id}`);
}

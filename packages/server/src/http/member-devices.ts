/**
 * A member's console session may read and delete their own devices, and nothing else: the
 * device list is narrowed to them, and another person's device is as absent as one of another
 * network (404, never 403: a member learns nothing of devices that are not theirs).
 */
import type { FastifyRequest } from 'fastify';
import { notFound } from '../core/errors.js';
import { routeOf } from './route-of.js';

const OWN_DEVICE_CALLS = new Set(['GET /v1/devices', 'GET /v1/devices/:id', 'DELETE /v1/devices/:id']);

/** A call a member makes on their own devices (the scope check lets it through; see below). */
export function isOwnDeviceCall(request: FastifyRequest): boolean {
  const user = request.principal?.user;
  if (user?.role !== 'member') return false;
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  return OWN_DEVICE_CALLS.has(`${method} ${routeOf(request).url}`);
}

/** Runs after validation, before the handler: narrows the list, hides others' devices. */
export async function confineToOwnDevices(request: FastifyRequest): Promise<void> {
  if (!isOwnDeviceCall(request)) return;
  const user = request.principal!.user!;
  if (routeOf(request).url === '/v1/devices') {
    (request.query as { user?: string }).user = user.id;
    return;
  }
  const { id } = request.params as { id: string };
  const device = await request.server.ctx.db
    .selectFrom('devices')
    .select('user_id')
    .where('id', '=', id)
    .where('network_id', '=', request.principal!.networkId)
    .executeTakeFirst();
  if (device?.user_id !== user.id) throw notFound(`device ${id} does not exist`);
}

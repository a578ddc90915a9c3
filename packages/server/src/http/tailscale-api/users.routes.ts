/**
 * Tailscale's user endpoints over Warren's users (scope `users`, or `read` for these reads).
 * Every Warren user is a member of its network: `type=shared` lists nobody. `currentlyConnected`
 * is whether one of the user's devices is online now.
 */
import { ROLES, type UserBody } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { onlineWhere } from '../../modules/network/online.js';
import { presentUser } from '../../modules/users/users.presenter.js';
import { findUser, listUsers } from '../../modules/users/users.repository.js';
import { invalidRequest, notFound } from '../problem.js';
import { tailnetOf } from './tailnet.js';

const config = { scope: 'users' as const, tailscaleScope: 'users' as const };
const hide = { hide: true };
const TYPES = ['member', 'shared'];

function presentTailscaleUser(user: UserBody, networkId: string, connected: boolean) {
  return {
    id: user.id,
    displayName: user.displayName,
    loginName: user.loginName,
    profilePicUrl: '',
    tailnetId: networkId,
    created: user.created,
    type: 'member',
    role: user.role,
    status: user.status,
    deviceCount: user.deviceCount,
    lastSeen: user.lastSeen,
    currentlyConnected: connected,
  };
}

/** The users with a device online now (one query). */
/**
 * Which of the given users have a device online. Read through the (network_id, user_id) index
 * for those users only: asking for the network's online owners read every online device,
 * tagged ones included, on every call.
 */
async function connectedUsers(app: FastifyInstance, networkId: string, userIds: string[]): Promise<Set<string>> {
  const { db, clock } = app.ctx;
  const connected = new Set<string>();
  // Chunks keep the IN list far below both dialects' parameter limits.
  for (let start = 0; start < userIds.length; start += 500) {
    const rows = await db
      .selectFrom('devices')
      .select('user_id')
      .distinct()
      .where('network_id', '=', networkId)
      .where('user_id', 'in', userIds.slice(start, start + 500))
      .where((eb) => onlineWhere(eb, clock.now(), true))
      .execute();
    for (const row of rows) if (row.user_id) connected.add(row.user_id);
  }
  return connected;
}

export async function tailscaleUserRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get<{ Params: { tailnet: string }; Querystring: { type?: string; role?: string } }>(
    '/tailnet/:tailnet/users',
    { config, schema: hide },
    async (request) => {
      const networkId = tailnetOf(request);
      const { type, role } = request.query;
      if (type !== undefined && !TYPES.includes(type)) throw invalidRequest(`type must be ${TYPES.join(' or ')}`);
      if (role !== undefined && !(ROLES as readonly string[]).includes(role)) {
        throw invalidRequest(`role must be one of ${ROLES.join(', ')}`);
      }
      if (type === 'shared') return { users: [] };
      const rows = await listUsers(ctx.db, networkId, role);
      const connected = await connectedUsers(
        app,
        networkId,
        rows.map((row) => row.id),
      );
      return { users: rows.map((row) => presentTailscaleUser(presentUser(row), networkId, connected.has(row.id))) };
    },
  );

  app.get<{ Params: { id: string } }>('/users/:id', { config, schema: hide }, async (request) => {
    const networkId = request.principal!.networkId;
    const row = await findUser(ctx.db, networkId, request.params.id);
    if (!row) throw notFound(`user ${request.params.id} does not exist`);
    const connected = await connectedUsers(app, networkId, [row.id]);
    return presentTailscaleUser(presentUser(row), networkId, connected.has(row.id));
  });
}

/**
 * Tailscale's user endpoints over Warren's users (scope `users`, or `read` for these reads).
 * Every Warren user is a member of its network: `type=shared` lists nobody. `currentlyConnected`
 * is whether one of the user's devices is online now.
 */
import { ROLES, type UserBody } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { presentUser } from '../../modules/users/users.presenter.js';
import { findUser, listUsers } from '../../modules/users/users.repository.js';
import { connectedUsers, isUserConnected } from '../../modules/users/users-connected.js';
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
      const rows = await listUsers(ctx.db, networkId, role, request.principal!.readStamp);
      const connected = await connectedUsers(ctx.db, networkId, rows, ctx.clock.now(), request.principal!.readStamp);
      return { users: rows.map((row) => presentTailscaleUser(presentUser(row), networkId, connected.has(row.id))) };
    },
  );

  app.get<{ Params: { id: string } }>('/users/:id', { config, schema: hide }, async (request) => {
    const networkId = request.principal!.networkId;
    const row = await findUser(ctx.db, networkId, request.params.id, request.principal!.readStamp);
    if (!row) throw notFound(`user ${request.params.id} does not exist`);
    const connected = await isUserConnected(ctx.db, networkId, row, ctx.clock.now(), request.principal!.readStamp);
    return presentTailscaleUser(presentUser(row), networkId, connected);
  });
}

/**
 * Tailscale's user endpoints over Warren's users (scope `users`, or `read` for these reads).
 * Every Warren user is a member of its network: `type=shared` lists nobody, and so does
 * `role=billing-admin`, a Tailscale role Warren does not have. `all` (or empty), the value
 * Tailscale's API reference gives both filters by default, filters nothing. `currentlyConnected`
 * is whether one of the user's devices is online now.
 */
import { ROLES, type UserBody } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { keptDerivation } from '../../lib/kept.js';
import { presentUser } from '../../modules/users/users.presenter.js';
import type { UserRow } from '../../modules/users/users.repository.js';
import { findUser, listUsers } from '../../modules/users/users.repository.js';
import {
  connectedAmong,
  isUserConnected,
  type OnlineDevices,
  onlineDevicesOfUsers,
} from '../../modules/users/users-connected.js';
import { invalidRequest, notFound } from '../problem.js';
import { tailnetOf } from './tailnet.js';
import { tailscaleTime, tailscaleTimeOrNull } from './times.js';

const config = { scope: 'users' as const, tailscaleScope: 'users' as const };
const hide = { hide: true };
const TYPES = ['member', 'shared'];
/** Tailscale's roles Warren has no user in: a filter on one lists nobody, as `type=shared` does. */
const ABSENT_ROLES = ['billing-admin'];
/** A filter's value that filters nothing: Tailscale's default, `all`, or none at all. */
const unfiltered = (value: string | undefined) => (value === 'all' || value === '' ? undefined : value);

function presentTailscaleUser(user: UserBody, networkId: string, connected: boolean) {
  return {
    id: user.id,
    displayName: user.displayName,
    loginName: user.loginName,
    profilePicUrl: '',
    tailnetId: networkId,
    created: tailscaleTime(user.created),
    type: 'member',
    role: user.role,
    status: user.status,
    deviceCount: user.deviceCount,
    lastSeen: tailscaleTimeOrNull(user.lastSeen),
    currentlyConnected: connected,
  };
}

/** Per network, one frozen object standing for it among a kept derivation's sources. */
const tailnets = new Map<string, Readonly<{ id: string }>>();
function tailnetSource(id: string): Readonly<{ id: string }> {
  let tailnet = tailnets.get(id);
  if (!tailnet) {
    tailnet = Object.freeze({ id });
    tailnets.set(id, tailnet);
  }
  return tailnet;
}

/**
 * The user list's body, presented once per kept user rows and online answer (lib/kept.ts), and
 * again when a connected user's row would rule them out.
 */
const presentTailscaleUsers = keptDerivation(
  (
    [tailnet, rows, online]: readonly [Readonly<{ id: string }>, readonly NonNullable<UserRow>[], OnlineDevices],
    now: number,
  ) => {
    const { connected, until } = connectedAmong(rows, online, now);
    const users = rows.map((row) => presentTailscaleUser(presentUser(row), tailnet.id, connected.has(row.id)));
    return { value: { users }, until };
  },
);

export async function tailscaleUserRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get<{ Params: { tailnet: string }; Querystring: { type?: string; role?: string } }>(
    '/tailnet/:tailnet/users',
    { config, schema: hide },
    async (request) => {
      const networkId = tailnetOf(request);
      const type = unfiltered(request.query.type);
      const role = unfiltered(request.query.role);
      if (type !== undefined && !TYPES.includes(type)) throw invalidRequest(`type must be ${TYPES.join(', ')} or all`);
      if (role !== undefined && !(ROLES as readonly string[]).includes(role) && !ABSENT_ROLES.includes(role)) {
        throw invalidRequest(`role must be one of ${[...ROLES, ...ABSENT_ROLES].join(', ')} or all`);
      }
      if (type === 'shared' || (role !== undefined && ABSENT_ROLES.includes(role))) return { users: [] };
      const { readStamp } = request.principal!;
      const now = ctx.clock.now();
      const rows = await listUsers(ctx.db, networkId, role, readStamp);
      const online = await onlineDevicesOfUsers(ctx.db, networkId, rows, now, readStamp);
      return presentTailscaleUsers([tailnetSource(networkId), rows, online], now);
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

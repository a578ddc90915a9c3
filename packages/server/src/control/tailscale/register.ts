/**
 * POST /machine/register over the Noise channel (the machine key is what the handshake proved):
 *  - with an auth key (`tailscale up --auth-key`): every auth-key rule of a native enrollment
 *    applies (modules/devices/enrollment.service.ts); tags the client asks for
 *    (`--advertise-tags`) must be owned in tagOwners by the key's user, unless the key carries
 *    tags of its own, which win as in Tailscale; a client that asks to be ephemeral
 *    (`Ephemeral`: `--state=mem:`, tsnet) is, whatever the key, as Tailscale has it;
 *  - a known node key of this machine logs in again without a key; with `OldNodeKey`, the
 *    device's node key is rotated to the new one; with an auth key (`tailscale up --auth-key`
 *    run again) see loginAgain;
 *  - `Expiry` in the past is a logout: the device's login ends (as at key expiry) and it goes
 *    offline; an ephemeral one is deleted;
 *  - without an auth key, a machine that is not known is given a login URL, and its follow-up
 *    request waits until a person approves it in the console (login/interactive-login.ts);
 *  - a device waiting for approval is registered with `MachineAuthorized: false` (the client
 *    waits, without peers, until it is approved through /v1);
 *  - a device whose login expired is answered `NodeKeyExpired`, upon which the client makes a
 *    new node key and registers it with the expired one as `OldNodeKey`: that is a new login
 *    (an auth key, `tailscale up --force-reauth --auth-key …`, or the login URL), never a
 *    rotation; with an auth key of its owner it renews the login of the same device;
 *  - a machine that logged out (and so forgot its node key) and logs in again as the same user
 *    is the device it was (enrollment.service.ts finds it by its machine key).
 * Refusals are answered in the response's `Error`, which the client shows as it is.
 */
import { NODE_KEY_PATTERN } from '@warren/contract';
import { type Actor, systemActor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { ApiError } from '../../core/errors.js';
import { listText, parseList } from '../../lib/json.js';
import { hashSecret, isWellFormedSecret } from '../../lib/secrets.js';
import { expireDevice } from '../../modules/devices/approval.service.js';
import { rotateNodeKey } from '../../modules/devices/device-reports.js';
import { deleteDevice } from '../../modules/devices/devices.service.js';
import { enroll } from '../../modules/devices/enrollment.service.js';
import { tagRefusal } from '../../modules/devices/login/tag-owners.js';
import { disconnect } from '../../modules/devices/presence.service.js';
import { loginExpired } from '../../modules/devices/standing.js';
import { authKeyByHash, keyRefusal, usableAuthKey } from '../../modules/keys/auth-keys.js';
import { awaitLogin, clipped, type LoginCall, type LoginRequest, startLogin } from './login/interactive-login.js';
import { userProfile } from './tailcfg.js';
import { type NodeRow, nodeByKey } from './tailscale.repository.js';

const NODE_KEY_RE = new RegExp(NODE_KEY_PATTERN);
const ZERO_TIME = '0001-01-01T00:00:00Z';

export interface RegisterRequest extends LoginRequest {
  Auth?: { AuthKey?: string } | null;
  Expiry?: string;
}

export type RegisterOutcome = { status: 200; body: Record<string, unknown> } | { status: 429; retryAfter: number };

const refused = (message: string): RegisterOutcome => ({ status: 200, body: { Error: message } });

function registered(
  row: Pick<NodeRow, 'user_id' | 'user_login' | 'user_display' | 'tags' | 'authorized'>,
): RegisterOutcome {
  const profile = userProfile(row);
  const login = { ID: profile.ID, LoginName: profile.LoginName, DisplayName: profile.DisplayName, ProfilePicURL: '' };
  return {
    status: 200,
    body: { User: { ...login, Created: ZERO_TIME }, Login: login, MachineAuthorized: row.authorized !== 0 },
  };
}

const isZeroKey = (key: string | undefined) => !key || /^nodekey:0{64}$/.test(key);

const sameTags = (a: readonly string[], b: readonly string[]) =>
  [...new Set(a)].sort().join(',') === [...new Set(b)].sort().join(',');

/**
 * `tailscale up --auth-key …` on a machine that is logged in: its live node key is known and
 * the Noise session proved its machine key, so the key is not what lets it in (without one it
 * would be let in all the same). A key of the identity the device has (its user, and its tags:
 * the key's, else the ones asked for) changes nothing: the login goes on, and the key is neither
 * checked nor used, as Headscale has it, since a container's entry point runs that command at
 * every start, typically with a single-use key spent at the first one or a key that has expired
 * since. A usable key of another identity is a new login: the answer `NodeKeyExpired` makes the
 * client make a new node key and register it with the key and this one as `OldNodeKey`, which is
 * what `--force-reauth` sends, so the same user's key retags the device in place and another
 * user's makes the machine a new device (enrollment.service.ts). Undefined: no decision here.
 */
async function loginAgain(
  ctx: AppContext,
  known: NodeRow,
  secret: string,
  requestedTags: readonly string[],
  now: number,
): Promise<RegisterOutcome | undefined> {
  const key = isWellFormedSecret('auth', secret) ? await authKeyByHash(ctx.db, hashSecret(secret)) : undefined;
  if (!key || key.network_id !== known.network_id) return undefined;
  const keyTags = parseList(key.tags);
  const tags = keyTags.length > 0 ? keyTags : requestedTags;
  if (key.user_id === known.user_id && sameTags(tags, parseList(known.tags))) return registered(known);
  if (keyRefusal(key, now)) return undefined;
  return { status: 200, body: { NodeKeyExpired: true, MachineAuthorized: false } };
}

export async function register(
  ctx: AppContext,
  machineKey: string,
  request: RegisterRequest,
  call: LoginCall,
): Promise<RegisterOutcome> {
  if (!NODE_KEY_RE.test(request.NodeKey ?? '')) return refused('NodeKey must be "nodekey:" and 64 hex digits');
  const now = ctx.clock.now();
  const known = await nodeByKey(ctx.db, request.NodeKey, machineKey);
  const actorOf = (node: NodeRow): Actor => ({
    ...systemActor(node.network_id, node.name),
    type: 'device',
    id: node.id,
  });

  if (request.Expiry && request.Expiry !== ZERO_TIME && Date.parse(request.Expiry) <= now) {
    if (known) {
      if (known.ephemeral) await deleteDevice(ctx, actorOf(known), known.id);
      else {
        // The login ends, as Headscale and Tailscale end it: peers drop the device, and the node
        // key the client has just forgotten logs in no more. Its next login is a new one.
        if (!loginExpired(known, now)) await expireDevice(ctx, actorOf(known), known.id);
        await disconnect(ctx, actorOf(known));
      }
    }
    return { status: 200, body: { NodeKeyExpired: true, MachineAuthorized: false } };
  }

  const authKey = request.Auth?.AuthKey;
  if (!authKey) {
    if (known?.user_status === 'suspended') return refused(`the user of device ${known.id} is suspended`);
    if (known) {
      if (loginExpired(known, now)) return { status: 200, body: { NodeKeyExpired: true, MachineAuthorized: false } };
      return registered(known);
    }
    if (!isZeroKey(request.OldNodeKey)) {
      const old = await nodeByKey(ctx.db, request.OldNodeKey!, machineKey);
      // An expired login is not renewed by a rotation: the machine logs in again below.
      if (old && !loginExpired(old, now)) {
        await rotateNodeKey(ctx.db, old, request.NodeKey);
        return registered(old);
      }
    }
    const login = request.Followup
      ? await awaitLogin(ctx, machineKey, { ...request, Followup: request.Followup }, call)
      : await startLogin(ctx, machineKey, request, isZeroKey(request.OldNodeKey) ? null : request.OldNodeKey!, call);
    if (login.kind === 'url') return { status: 200, body: { AuthURL: login.authUrl, MachineAuthorized: false } };
    if (login.kind === 'limited') return { status: 429, retryAfter: login.retryAfter };
    if (login.kind === 'refused') return refused(login.message);
    const row = login.kind === 'approved' ? await nodeByKey(ctx.db, request.NodeKey, machineKey) : undefined;
    return row ? registered(row) : refused('the login ended before the device was registered; run tailscale up again');
  }

  if (known && known.user_status !== 'suspended' && !loginExpired(known, now)) {
    const again = await loginAgain(ctx, known, authKey, request.Hostinfo?.RequestTags ?? [], now);
    if (again) return again;
  }
  const key = await usableAuthKey(ctx.db, authKey, now);
  if (key instanceof ApiError) return refused(key.detail);
  const decision = await ctx.limiter.hit(`enroll:${key.id}`, ctx.settings.enrollRateLimit);
  if (!decision.allowed) return { status: 429, retryAfter: decision.resetSeconds };

  const hostinfo = request.Hostinfo ?? {};
  const requested = [...new Set(hostinfo.RequestTags ?? [])].sort();
  let tags: string[] | undefined;
  if (requested.length > 0 && JSON.parse(key.tags || '[]').length === 0) {
    const problem = await tagRefusal(ctx, key.network_id, key.user_id, requested);
    if (problem) return refused(problem);
    tags = requested;
  }
  try {
    // As a native enrollment's: the device, named once it exists (enroll sets actor.id).
    const actor: Actor = { ...systemActor(key.network_id, 'tailscale'), type: 'device', name: null };
    const { device, ownerDisplayName } = await enroll(
      ctx,
      actor,
      key,
      {
        hostname: clipped(hostinfo.Hostname, 63, 'device'),
        os: clipped(hostinfo.OS, 32, 'unknown'),
        nodeKey: request.NodeKey,
        ...(hostinfo.IPNVersion && { clientVersion: hostinfo.IPNVersion.slice(0, 64) }),
      },
      {
        machineKey,
        ...(tags && { tags }),
        ...(!isZeroKey(request.OldNodeKey) && { previousNodeKey: request.OldNodeKey }),
        ...(request.Ephemeral === true && { ephemeral: true }),
      },
    );
    // Answered from what the enrollment committed, not read back.
    return registered({
      user_id: device.user?.id ?? null,
      user_login: device.user?.loginName ?? null,
      user_display: ownerDisplayName,
      tags: listText(device.tags),
      authorized: device.authorized ? 1 : 0,
    });
  } catch (error) {
    if (error instanceof ApiError) return refused(error.detail);
    throw error;
  }
}

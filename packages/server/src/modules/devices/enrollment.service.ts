/**
 * Enrollment (POST /v1/node/register), in one short transaction:
 *  1. the auth key's use is taken by a conditional UPDATE (valid, not revoked, not expired,
 *     reusable or not yet used) — zero rows updated means another enrollment won the race
 *     or the key stopped being valid, and the request is refused with nothing changed;
 *  2. the network row's epochs are bumped and its next address index taken, in one statement
 *     (on PostgreSQL this row lock also serialises the enrollments of one network, so from
 *     here to the commit each round trip is time the others wait: the owner, the device of
 *     this node key and whether the name is free are then read in one statement);
 *  3. a nodeKey already enrolled in the network re-enrolls that device (same id, name and
 *     addresses; the new credential replaces the old one, which is refused from then on),
 *     but only with an auth key of the device's owner — the same user and the same tags —
 *     so knowing a device's public key does not let any auth key take it over (409), and
 *     gives the address index back (so re-enrolling never uses one up); otherwise the plan's
 *     device limit is checked and the device is created with the index taken;
 *  4. advertised routes are synced, and the audit entry `device.enroll` is written.
 * Every enrollment is a login: the device's login expiry starts anew from the network's
 * `nodeKeyExpiry`, which lifts an expiry that happened. A new device waits for approval when the
 * network asks for it, unless the auth key is pre-approved; re-enrolling keeps its approval.
 * A failure at any step rolls everything back, the key's use included.
 */
import type { DeviceBody, RegisterRequest } from '@warren/contract';
import { sql } from 'kysely';
import type { Actor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { invalidRequest, invalidState, planLimit, unauthenticated } from '../../core/errors.js';
import type { EventDraft } from '../../core/events.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import { newId } from '../../lib/ids.js';
import { listText, parseList } from '../../lib/json.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import type { Db } from '../../storage/database.js';
import { type AuthKeyRow, refusalNow } from '../keys/auth-keys.js';
import { useAuthKey } from '../keys/keys.repository.js';
import { moveEpochsForEnrollment, netmapEpoch, presenceEpoch } from '../network/epochs.js';
import { giveBackAddressIndex } from '../network/network.repository.js';
import { limitsOf } from '../network/plans.js';
import { nodeKeyLifetime } from '../network/settings.service.js';
import { advertisedPrefixes } from '../routes/prefixes.js';
import { approvalEntries, routeEvents } from '../routes/route-events.js';
import { MAX_ADDR_INDEX, nameBase, nameOf } from './addresses.js';
import { advertise } from './advertised-routes.js';
import { deviceDetail } from './device-details.js';
import { presentDeviceDetail } from './devices.presenter.js';
import { insertTags, replaceTags } from './devices.repository.js';
import { loginExpiry } from './standing.js';

/** Hex in either case, as Tailscale's key parser (types/key) reads it; kept in lower case, NODE_KEY_PATTERN. */
const NODE_KEY_ANY_CASE = /^nodekey:[0-9a-fA-F]{64}$/;
const ZERO_NODE_KEY = `nodekey:${'0'.repeat(64)}`;

/**
 * The node key as stored: `nodekey:` and 64 hex digits, lower case, so one public key written in
 * either case is one device (re-enrollment finds it). The prefix is Tailscale's, in its case.
 * The zero key is refused: Tailscale treats it as "no key", and every device that sent it would
 * claim the same identity.
 */
function canonicalNodeKey(text: string): string {
  if (!NODE_KEY_ANY_CASE.test(text)) {
    throw invalidRequest('nodeKey must be "nodekey:" followed by 64 hex digits (the device\'s public key)');
  }
  const key = text.toLowerCase();
  if (key === ZERO_NODE_KEY) throw invalidRequest('nodeKey is the zero key, which is no public key');
  return key;
}

export interface Enrolled {
  device: DeviceBody;
  nodeToken: string;
  /** The display name of the device's user (null: none set, or no user), for Tailscale's login profile. */
  ownerDisplayName: string | null;
}

/** The key's user; if that user was removed since, the network's first owner. */
function deviceOwner(trx: Db, networkId: string, userId: string | null) {
  return trx
    .selectFrom('users')
    .select(['id', 'login_name', 'display_name', 'status'])
    .where('network_id', '=', networkId)
    .where((eb) => (userId ? eb.or([eb('id', '=', userId), eb('role', '=', 'owner')]) : eb('role', '=', 'owner')))
    .orderBy(sql`case when id = ${userId ?? ''} then 0 else 1 end`)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1);
}

/** The device enrolled under this node key in the network, if any. */
const deviceByNodeKey = (trx: Db, networkId: string, nodeKey: string) =>
  trx
    .selectFrom('devices')
    .select(['id', 'user_id', 'tags'])
    .where('network_id', '=', networkId)
    .where('node_key', '=', nodeKey);

/**
 * The device this Tailscale machine (its machine key) enrolled last in the network, if any;
 * a native enrollment (no machine key) asks for '' and finds none.
 */
export const deviceOfMachineQuery = (trx: Db, networkId: string, machineKey: string) =>
  trx
    .selectFrom('devices')
    .select(['id', 'user_id', 'tags'])
    .where('network_id', '=', networkId)
    .where('machine_key', '=', machineKey)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1);

const deviceNamed = (trx: Db, networkId: string, name: string) =>
  trx.selectFrom('devices').select('id').where('network_id', '=', networkId).where('name', '=', name).limit(1);

/**
 * What an enrollment reads under the network's lock, in one statement (each round trip there
 * is time the network's other enrollments wait): the device's owner, the device this node key
 * already is, the device this machine enrolled last, and whether the name `base` is taken. Each
 * is a derived table joined `on true` to one row, so a missing one reads as nulls.
 */
async function enrollmentReads(
  trx: Db,
  networkId: string,
  userId: string | null,
  nodeKey: string,
  machineKey: string | undefined,
  base: string,
) {
  const row = await trx
    .selectFrom(sql`(select 1)`.as('one'))
    .leftJoin(deviceOwner(trx, networkId, userId).as('owner'), (join) => join.onTrue())
    .leftJoin(deviceByNodeKey(trx, networkId, nodeKey).as('known'), (join) => join.onTrue())
    .leftJoin(deviceOfMachineQuery(trx, networkId, machineKey ?? '').as('machine'), (join) => join.onTrue())
    .leftJoin(deviceNamed(trx, networkId, base).as('named'), (join) => join.onTrue())
    .select([
      'owner.id as owner_id',
      'owner.login_name as owner_login',
      'owner.display_name as owner_display',
      'owner.status as owner_status',
      'known.id as known_id',
      'known.user_id as known_user_id',
      'known.tags as known_tags',
      'machine.id as machine_id',
      'machine.user_id as machine_user_id',
      'machine.tags as machine_tags',
      'named.id as named_id',
    ])
    .executeTakeFirstOrThrow();
  return {
    owner:
      row.owner_id === null
        ? undefined
        : { id: row.owner_id, login_name: row.owner_login, display_name: row.owner_display, status: row.owner_status },
    known:
      row.known_id === null ? undefined : { id: row.known_id, user_id: row.known_user_id, tags: row.known_tags ?? '' },
    machine:
      row.machine_id === null
        ? undefined
        : { id: row.machine_id, user_id: row.machine_user_id, tags: row.machine_tags ?? '' },
    baseTaken: row.named_id !== null,
  };
}

/**
 * `web`, else `web-N` with N one past the highest in use for that base (one indexed MAX).
 * `baseTaken`: whether `base` itself is taken, when the caller read it already.
 */
export async function allocateName(
  trx: Db,
  networkId: string,
  base: string,
  baseTaken?: boolean,
): Promise<{ name: string; seq: number }> {
  const taken = async (name: string) => (await deviceNamed(trx, networkId, name).executeTakeFirst()) !== undefined;
  if (!(baseTaken ?? (await taken(base)))) return { name: base, seq: 0 };
  const row = await trx
    .selectFrom('devices')
    .select((eb) => eb.fn.max<number | null>('name_seq').as('seq'))
    .where('network_id', '=', networkId)
    .where('name_base', '=', base)
    .executeTakeFirst();
  let seq = Number(row?.seq ?? 0) + 1;
  // A hostname that itself looks like `web-3` may hold the name already.
  while (await taken(nameOf(base, seq))) seq++;
  return { name: nameOf(base, seq), seq };
}

async function countDevices(trx: Db, networkId: string): Promise<number> {
  const row = await trx
    .selectFrom('devices')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('network_id', '=', networkId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** How enrolling `device` with a key of this user and tags would change its owner, or undefined. */
function ownerChange(
  device: { user_id: string | null; tags: string },
  userId: string | null,
  tags: readonly string[],
): string | undefined {
  if (device.user_id !== userId) return 'another user';
  const current = [...new Set(parseList(device.tags))].sort();
  const wanted = [...new Set(tags)].sort();
  if (current.join(',') !== wanted.join(',')) return `other tags (${wanted.join(', ') || 'none'})`;
  return undefined;
}

/** How a device that speaks Tailscale's protocol enrolls (control/tailscale/register.ts). */
export interface TailscaleEnrollment {
  /** The machine key its Noise session proved. */
  machineKey: string;
  /** Tags it asked for, already checked against tagOwners; absent: the auth key's. */
  tags?: readonly string[];
  /**
   * The node key this machine held before (`OldNodeKey`, sent by `tailscale up --force-reauth`
   * or after its login expired): that device logs in again under the new key, keeping its id,
   * name and addresses, when the auth key is its owner's, with the tags this login gives it
   * (`--advertise-tags` or the key's: a device is tagged or untagged in place, as in
   * Tailscale); with another owner's key the machine becomes a new device, as in Tailscale.
   * Without one (after `tailscale logout`), the device this machine enrolled last is taken
   * under the same rule.
   */
  previousNodeKey?: string;
  /**
   * The client asked to be ephemeral (`RegisterRequest.Ephemeral`: tailscaled with
   * `--state=mem:`, as Tailscale's container image runs it without a state directory, or a tsnet
   * program with `Ephemeral`): the device is, whatever the key, as Tailscale makes it.
   */
  ephemeral?: boolean;
}

type EnrolledDevice = { id: string; user_id: string | null; tags: string };

/**
 * The device re-enrolled: the one of this node key (`known`, read with the owner), else this
 * machine's previous one (its old node key's, else the one it enrolled last: a client that
 * logged out forgot its node key and sends no old one) when it has the same owner, as
 * Headscale and Tailscale keep a machine that logs in again as the same user, whatever tags
 * the new login gives it.
 */
async function reEnrolled(
  trx: Db,
  networkId: string,
  reads: { known?: EnrolledDevice; machine?: EnrolledDevice },
  tailscale: TailscaleEnrollment | undefined,
  userId: string | null,
) {
  if (reads.known || !tailscale) return reads.known;
  const previous = tailscale.previousNodeKey
    ? await deviceByNodeKey(trx, networkId, tailscale.previousNodeKey)
        .where('machine_key', '=', tailscale.machineKey)
        .executeTakeFirst()
    : undefined;
  const device = previous ?? reads.machine;
  return device && device.user_id === userId ? device : undefined;
}

/**
 * A person's login of a machine (control/tailscale/: `tailscale up` without an auth key, approved
 * in the console): the device becomes that user's, as if enrolled with an auth key of theirs.
 */
export interface UserLogin {
  networkId: string;
  userId: string;
  tags: readonly string[];
  ephemeral: boolean;
  /** Whether the device skips the network's device approval (the approver may approve devices). */
  preApproved: boolean;
  /** Ends the login in the enrollment's transaction; throws when it was already used or expired. */
  claim: (trx: Db, now: number) => Promise<void>;
}

/** What an enrollment is granted by: an auth key, whose use it takes, or a person's login. */
type Grant = { key: AuthKeyRow } | { login: UserLogin };

/** What enrolling needs of the application: its database and clock (a seeding tool has no server). */
type EnrollContext = Pick<AppContext, 'db' | 'clock'>;

export async function enroll(
  ctx: EnrollContext,
  actor: Actor,
  key: AuthKeyRow,
  body: RegisterRequest,
  tailscale?: TailscaleEnrollment,
): Promise<Enrolled> {
  return enrollDevice(ctx, actor, { key }, body, tailscale);
}

/** Enrolls the machine a person logged in (see UserLogin); it always speaks Tailscale's protocol. */
export async function enrollForUser(
  ctx: EnrollContext,
  actor: Actor,
  login: UserLogin,
  body: RegisterRequest,
  tailscale: TailscaleEnrollment,
): Promise<Enrolled> {
  return enrollDevice(ctx, actor, { login }, body, tailscale);
}

/**
 * Takes one use of the auth key, atomically with the enrollment; refuses a key that stopped being
 * valid. The conditional UPDATE is the whole check: on PostgreSQL a second enrollment's update of
 * the same key waits for the first's row lock and then tests its conditions again on the row the
 * first wrote, so a single-use key is used once (no lock of its own needed before it).
 */
async function takeKeyUse(trx: Db, key: AuthKeyRow, now: number): Promise<void> {
  if (!(await useAuthKey(trx, key.id, now))) throw await refusalNow(trx, key.id, now);
}

async function enrollDevice(
  ctx: EnrollContext,
  actor: Actor,
  grant: Grant,
  body: RegisterRequest,
  tailscale?: TailscaleEnrollment,
): Promise<Enrolled> {
  const nodeKey = canonicalNodeKey(body.nodeKey);
  const prefixes = advertisedPrefixes(body.advertiseRoutes ?? []);
  const key = 'key' in grant ? grant.key : null;
  const login = 'login' in grant ? grant.login : null;
  const networkId = key ? key.network_id : login!.networkId;
  const tags = tailscale?.tags ? [...tailscale.tags] : key ? parseList(key.tags) : [...login!.tags];
  const nodeToken = generateSecret('node');
  const nodeTokenHash = hashSecret(nodeToken);
  // As a Tailscale client's are taken (control/tailscale/register.ts): without the spaces around
  // them. One of spaces alone is none, and is refused rather than named or guessed.
  const hostname = body.hostname.trim();
  if (!hostname) throw invalidRequest("hostname is blank: send the machine's host name");
  const os = body.os.trim();
  if (!os) throw invalidRequest('os is blank: send the operating system (linux, windows, macOS, …)');
  const base = nameBase(hostname);

  return unitOfWork(ctx, actor, 'device.enroll', async (trx, now, changes) => {
    if (key) await takeKeyUse(trx, key, now);
    else await login!.claim(trx, now);

    // An enrolled device is online: presence snapshots are stale too (presence-snapshot.ts).
    const network = await moveEpochsForEnrollment(trx, networkId, changes);
    const reads = await enrollmentReads(
      trx,
      networkId,
      key ? key.user_id : login!.userId,
      nodeKey,
      tailscale?.machineKey,
      base,
    );
    const owner = reads.owner;
    // A person's login is theirs alone: never handed to the owner if they were removed meanwhile.
    if (login && owner?.id !== login.userId) throw invalidState(`user ${login.userId} no longer exists`);
    // A suspended user's devices are refused (control/native/node-auth.ts): so is enrolling a new one.
    if (owner?.status === 'suspended') {
      throw unauthenticated(`the user of this ${key ? 'auth key' : 'login'} (${owner.id}) is suspended`);
    }
    const userId = owner?.id ?? null;
    const ownerDisplayName = owner?.display_name ?? null;
    const existing = await reEnrolled(trx, networkId, reads, tailscale, userId);

    const common = {
      hostname,
      os,
      user_id: userId,
      tags: listText(tags),
      client_version: body.clientVersion ?? null,
      key_id: key?.id ?? null,
      ephemeral: (key ? key.ephemeral !== 0 : login!.ephemeral) || tailscale?.ephemeral ? 1 : 0,
      last_seen_at: now,
      disconnected: 0,
      node_token_hash: nodeTokenHash,
      ...(tailscale && { protocol: 'tailscale', machine_key: tailscale.machineKey }),
      expires_at: loginExpiry(now, nodeKeyLifetime(network.nodeKeyExpiry)),
      key_expired: 0,
      // A device logged in with tags (a tagged key, --advertise-tags) does not expire, as in
      // Tailscale and Headscale: servers are tagged so that no one has to log them in again.
      // Otherwise a new device expires and a re-enrolled one keeps what an admin set.
      ...(tags.length > 0 && { key_expiry_disabled: 1 }),
    };
    const authorized = !network.deviceApproval || (key ? key.pre_approved !== 0 : login!.preApproved);
    let deviceId: string;
    // Re-enrolling an existing device changes it; a new one is created.
    const event: EventDraft['type'] = existing ? 'device.updated' : 'device.created';
    if (existing) {
      // A node key enrolled already keeps its owner and tags; a machine's new login may retag it.
      const handover = existing === reads.known ? ownerChange(existing, userId, tags) : undefined;
      if (handover) {
        throw invalidState(
          `this nodeKey is enrolled as device ${existing.id}, and this ${key ? 'auth key' : 'login'} would give it ${handover}; ` +
            're-enroll with an auth key of the same user and tags, or delete the device to enroll it anew',
        );
      }
      deviceId = existing.id;
      await giveBackAddressIndex(trx, networkId, network.addrIndex);
      await changes.touch(netmapEpoch, [deviceId]);
      await changes.touch(presenceEpoch, [deviceId]);
      await trx
        .updateTable('devices')
        // Untagged again, it expires again (Tailscale's rule).
        .set({
          ...common,
          node_key: nodeKey,
          ...(tags.length === 0 && parseList(existing.tags).length > 0 && { key_expiry_disabled: 0 }),
        })
        .where('id', '=', deviceId)
        .execute();
      await replaceTags(trx, networkId, deviceId, tags);
    } else {
      const limit = limitsOf(network.plan).devices;
      if (limit !== null && (await countDevices(trx, networkId)) >= limit) {
        throw planLimit(`the ${network.plan} plan allows ${limit} devices; remove one or change the plan`);
      }
      // Taken by the epoch move, under the network's row lock: no other enrollment has it.
      const addrIndex = network.addrIndex;
      if (addrIndex > MAX_ADDR_INDEX) throw invalidState('the network has used up its address space (100.64.0.0/10)');
      const { name, seq } = await allocateName(trx, networkId, base, reads.baseTaken);
      deviceId = newId('device');
      await changes.touch(netmapEpoch, [deviceId]);
      await changes.touch(presenceEpoch, [deviceId]);
      const row = {
        ...common,
        id: deviceId,
        network_id: networkId,
        name,
        name_base: base,
        name_seq: seq,
        node_key: nodeKey,
        addr_index: addrIndex,
        created_at: now,
        authorized: authorized ? 1 : 0,
        key_expiry_disabled: tags.length > 0 ? 1 : 0,
        netmap_version: 1,
        netmap_hash: null,
        advertised_routes: '', // set by advertise below
      };
      await trx.insertInto('devices').values(row).execute();
      await insertTags(trx, networkId, deviceId, tags);
      if (prefixes.length === 0) {
        // Nothing else to read back: present the row just written (saves two queries per enrollment).
        if (key) nameDevice(actor, deviceId, name);
        const device = presentDeviceDetail(
          {
            ...row,
            protocol: tailscale ? 'tailscale' : 'native',
            machine_key: tailscale?.machineKey ?? null,
            // Its first map request reports whether it runs Tailscale SSH.
            ssh_enabled: 0,
            user_login: owner?.login_name ?? null,
            network_name: network.name,
            network_dns_domain: network.dnsDomain,
          },
          now,
          [],
        );
        return {
          value: { device, nodeToken, ownerDisplayName },
          target: deviceId,
          events: enrollEvents(event, device),
        };
      }
    }
    const routes = await advertise(trx, networkId, deviceId, prefixes, now);
    const device = await deviceDetail(trx, networkId, deviceId, now);
    if (key) nameDevice(actor, deviceId, device.name);
    const events = [...enrollEvents(event, device), ...(await routeEvents(trx, networkId, now, routes))];
    return {
      value: { device, nodeToken, ownerDisplayName },
      target: deviceId,
      events,
      also: approvalEntries(routes.approved),
    };
  });
}

/**
 * The audit entry and events of an enrollment with an auth key name the device it made or
 * renewed, as every later call of that device does (a login names the person who approved).
 */
function nameDevice(actor: Actor, deviceId: string, name: string): void {
  actor.id = deviceId;
  actor.name = name;
}

/** The device's own events: created or updated, and pending when a new device waits for approval. */
function enrollEvents(type: EventDraft['type'], device: DeviceBody): EventDraft[] {
  const events: EventDraft[] = [{ type, data: { device } }];
  if (type === 'device.created' && !device.authorized) events.push({ type: 'device.pending', data: { device } });
  return events;
}

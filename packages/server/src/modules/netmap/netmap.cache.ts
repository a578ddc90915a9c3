/**
 * The per-process cache behind netmaps: one NetworkView per network and database, valid for
 * one (netmap epoch, policy version and ETag) as read from the database. Every change that can
 * alter who sees whom — enrollment, deletion, tags, routes, user roles, the policy — bumps the
 * epoch in its own transaction, so an instance never serves a view older than the database,
 * whichever instance made the change.
 *
 * A view is patched rather than rebuilt when the netmap change log (netmap-changes.ts) covers
 * every epoch since the view's: only the devices it names are read again, and everything else
 * the view worked out carries over (NetworkView.patched). A policy of another meaning that
 * changed no device (the PUT logs its epoch so) is one such epoch: the view is carried to it
 * with every device's row and text kept, and its peer map too when the new policy's reach is
 * the old one's (NetworkView.withPolicy). Anything else — a role change, a policy that approved
 * routes, a log pruned past the view — loads the view anew.
 */
import { innerMap } from '../../lib/nested-maps.js';
import { type PolicyUser, roleMap } from '../../policy/index.js';
import type { Db } from '../../storage/database.js';
import { currentPolicy, meaningKey } from '../acl/policy-cache.js';
import { changedSince } from '../network/netmap-changes.js';
import { type NetmapHead, usersNamed } from './netmap.repository.js';
import { NetworkView } from './netmap-view.js';
import { deviceIdentities, policyUsers } from './policy-inputs.repository.js';

/** Views hold only the devices that take part in netmaps (devices/standing.ts). */
const IN_NETMAPS = { inNetmaps: true } as const;

/**
 * How views were made in this process: counted so tests can tell a patch from a rebuild.
 * `policies`: patches that carried a view to a policy of another meaning.
 */
export const viewStats = { loads: 0, patches: 0, policies: 0 };

interface Entry {
  key: string;
  head: NetmapHead;
  view: Promise<NetworkView>;
}

/** Networks whose view is kept per database; the least recently used is dropped past this. */
const MAX_NETWORKS = 64;
/**
 * Per database, so that two instances in one process (tests, benchmarks) keep their own views
 * as two processes would.
 */
const caches = new WeakMap<Db, Map<string, Entry>>();

/** Drops every view held for this database: the next request loads anew (tests compare with it). */
export function forgetViews(db: Db): void {
  caches.delete(db);
}

const viewKey = (head: NetmapHead) => `${head.epoch}:${head.policyVersion}:${head.policyEtag}`;

/**
 * The network's view for this head: the one held when its key matches; else patched from the
 * one held, or loaded (once, for concurrent callers). `reload` forces a load.
 */
export function networkView(db: Db, networkId: string, head: NetmapHead, reload = false): Promise<NetworkView> {
  const views = innerMap(caches, db, Map);
  const key = viewKey(head);
  const hit = views.get(networkId);
  views.delete(networkId);
  // A call whose head is older than the held view's (concurrent calls finish in any order) is
  // served that view: a state after the call began, never one before. Rebuilt back to the
  // call's own head, it cost a whole load, and the next call's patch or load forward again.
  if (hit && !reload && (hit.key === key || hit.head.epoch > head.epoch)) {
    views.set(networkId, hit);
    return hit.view;
  }
  // A held view is patched to a later epoch by the change log, to another policy too when the
  // log covers the policy's epoch (patchView).
  const patchable = hit && !reload && hit.head.epoch < head.epoch;
  const samePolicy = hit?.head.policyVersion === head.policyVersion && hit?.head.policyEtag === head.policyEtag;
  const view = patchable ? patchView(db, networkId, hit, head, key, samePolicy) : loadView(db, networkId, key);
  const entry = { key, head, view };
  views.set(networkId, entry);
  if (views.size > MAX_NETWORKS) views.delete(views.keys().next().value as string);
  view.catch(() => {
    if (views.get(networkId) === entry) views.delete(networkId);
  });
  return view;
}

/** The policy meaning (policy-cache.ts meaningKey) each view was built with. */
const meanings = new WeakMap<NetworkView, string>();

async function loadView(db: Db, networkId: string, key: string): Promise<NetworkView> {
  // Read after the head that names this view: a change committed in between makes the view
  // newer than its key, never older, and the next request's head brings it up to date.
  const [policy, rows, users] = await Promise.all([
    currentPolicy(db, networkId),
    deviceIdentities(db, networkId, undefined, IN_NETMAPS),
    policyUsers(db, networkId),
  ]);
  viewStats.loads++;
  const view = new NetworkView(key, policy.compiled, rows, users);
  meanings.set(view, meaningKey(policy));
  return view;
}

/**
 * The held view brought to `head` by the change log: the devices changed since its epoch are
 * read again (as of now, which may be newer than `head`, as with loadView) and patched in. A
 * new policy is reached only when the log covers its epoch (the policy PUT logs one that
 * changed no device): one that means what the view's does is carried over as it is, one of
 * another meaning replaces the view's policy and what depends on it (withPolicy). A view
 * nothing changed for is kept as it is, with the versions it remembers.
 */
async function patchView(
  db: Db,
  networkId: string,
  held: Entry,
  head: NetmapHead,
  key: string,
  samePolicy: boolean,
): Promise<NetworkView> {
  const [prev, changed, policy] = await Promise.all([
    held.view.catch(() => undefined),
    changedSince(db, networkId, held.head.epoch, head.epoch),
    samePolicy ? undefined : currentPolicy(db, networkId),
  ]);
  if (!prev || !changed) return loadView(db, networkId, key);
  let base = prev;
  let meaning = meanings.get(prev);
  if (policy && meaningKey(policy) !== meaning) {
    if (meaning === undefined) return loadView(db, networkId, key);
    // Read after the head, as loadView reads it: the policy may be newer than `head`, never older.
    meaning = meaningKey(policy);
    base = prev.withPolicy(key, policy.compiled);
    meanings.set(base, meaning);
    viewStats.policies++;
  }
  if (changed.length === 0) {
    viewStats.patches++;
    return base;
  }
  // A device that left netmaps (waiting for approval, expired) reads as removed.
  const rows = await deviceIdentities(db, networkId, changed, IN_NETMAPS);
  const users = await withOwners(db, networkId, base.users, rows);
  if (!users) return loadView(db, networkId, key);
  viewStats.patches++;
  const view = base.patched(key, rows, changed, users);
  if (meaning !== undefined) meanings.set(view, meaning);
  return view;
}

/**
 * `users` and the owners of `rows` it does not know yet (a device enrolled for a new user), or
 * undefined when an owner it knows has another role now: a user removed and created again
 * under the same login, whose identity class the view would otherwise reuse.
 */
async function withOwners(
  db: Db,
  networkId: string,
  users: PolicyUser[],
  rows: readonly { user_login: string | null }[],
): Promise<PolicyUser[] | undefined> {
  const logins = [...new Set(rows.map((r) => r.user_login))].filter((l): l is string => l !== null);
  if (logins.length === 0) return users;
  const known = roleMap(users);
  const owners = await usersNamed(db, networkId, logins);
  if (owners.some((u) => known.has(u.login) && known.get(u.login) !== u.role)) return undefined;
  const added = owners.filter((u) => !known.has(u.login));
  return added.length === 0 ? users : [...users, ...added];
}

/**
 * The per-process cache behind netmaps: one NetworkView per network, valid for one
 * (netmap epoch, policy version and ETag) as read from the database. Every change that can
 * alter who sees whom — enrollment, deletion, tags, routes, user roles, the policy — bumps the
 * epoch in its own transaction, so an instance never serves a view older than the database,
 * whichever instance made the change.
 *
 * Which router is primary for a prefix also depends on presence, which changes with time and
 * not with the epoch. The view therefore keeps its peer map per primary assignment: the caller
 * computes the assignment from the approved routes on each request (a small query) and the
 * peer map is rebuilt only when it differs.
 */
import { type CompiledPolicy, PeerMap, type PeerView, type PolicyDevice, type PolicyUser } from '../../policy/index.js';
import type { Db } from '../../storage/database.js';
import { currentPolicy } from '../acl/policy-cache.js';
import {
  type DeviceIdentityRow,
  deviceIdentities,
  policyDevice,
  policyUsers,
} from '../acl/policy-inputs.repository.js';
import { isOnline } from '../devices/presence.js';
import type { NetmapHead, ServedRouteRow } from './netmap.repository.js';

/** Which routes are primary: device id → prefixes it serves as primary; `key` names the assignment. */
export interface Primaries {
  byDevice: Map<string, string[]>;
  key: string;
}

/**
 * Per prefix, the earliest approved route (then the lowest id) whose device is online — the
 * rule the routes presenter's SQL applies.
 */
export function choosePrimaries(rows: readonly ServedRouteRow[], now: number): Primaries {
  const best = new Map<string, ServedRouteRow>();
  for (const row of rows) {
    if (!isOnline(row, now)) continue;
    const current = best.get(row.prefix);
    const at = Number(row.approved_at ?? 0);
    const currentAt = Number(current?.approved_at ?? 0);
    if (!current || at < currentAt || (at === currentAt && row.id < current.id)) best.set(row.prefix, row);
  }
  const byDevice = new Map<string, string[]>();
  const ids: string[] = [];
  for (const row of best.values()) {
    ids.push(row.id);
    const list = byDevice.get(row.device_id);
    if (list) list.push(row.prefix);
    else byDevice.set(row.device_id, [row.prefix]);
  }
  for (const list of byDevice.values()) list.sort();
  return { byDevice, key: ids.sort().join(',') };
}

export class NetworkView {
  readonly index: Map<string, number>;
  private readonly devices: PolicyDevice[];
  private readonly peerFields: Array<string | undefined>;
  /** Per device, its whole peer JSON when offline (2i) and online (2i + 1). */
  private readonly plainPeers: Array<string | undefined>;
  private peerMap: { key: string; map: PeerMap } | undefined;
  /**
   * Per device, the stamp of the inputs its netmap was last built from here and that netmap's
   * hash: while both still hold, its stored version is current (netmap.service.ts).
   */
  readonly versions = new Map<string, { stamp: string; hash: string }>();

  constructor(
    readonly key: string,
    private readonly policy: CompiledPolicy,
    private readonly rows: DeviceIdentityRow[],
    private readonly users: PolicyUser[],
  ) {
    this.devices = rows.map((row) => policyDevice(row));
    this.index = new Map(rows.map((row, i) => [row.id, i]));
    this.peerFields = new Array(rows.length);
    this.plainPeers = new Array(2 * rows.length);
  }

  get size(): number {
    return this.rows.length;
  }

  /** The peer map for a primary assignment, rebuilt only when the assignment changed. */
  peersFor(primaries: Primaries): PeerMap {
    if (this.peerMap?.key !== primaries.key) {
      const devices =
        primaries.byDevice.size === 0
          ? this.devices
          : this.devices.map((d) => {
              const routes = primaries.byDevice.get(d.id);
              return routes ? { ...d, routes } : d;
            });
      this.peerMap = { key: primaries.key, map: new PeerMap(this.policy, devices, this.users) };
    }
    return this.peerMap.map;
  }

  /**
   * The JSON of a peer as every viewer sees it when no route of it is visible: the peer map
   * then hands out the same frozen allowedIPs (its addresses) to every viewer, so the text is
   * made once per view and presence. Otherwise only the fields that do not depend on the viewer
   * are reused.
   */
  peerJson(i: number, view: PeerView, online: boolean): string {
    // Frozen and as long as the peer's addresses: the shared view without routes.
    if (Object.isFrozen(view) && view.allowedIPs.length === this.devices[i].addresses.length) {
      const slot = 2 * i + (online ? 1 : 0);
      let text = this.plainPeers[slot];
      if (text === undefined) {
        text = `${this.peerPrefix(i)}${JSON.stringify(view.allowedIPs)},"online":${online}}`;
        this.plainPeers[slot] = text;
      }
      return text;
    }
    return `${this.peerPrefix(i)}${JSON.stringify(view.allowedIPs)},"online":${online}}`;
  }

  private peerPrefix(i: number): string {
    let text = this.peerFields[i];
    if (text === undefined) {
      const d = this.devices[i];
      const name = this.rows[i].name;
      text = `{"id":${JSON.stringify(d.id)},"name":${JSON.stringify(name)},"addresses":${JSON.stringify(d.addresses)},"tags":${JSON.stringify(d.tags)},"allowedIPs":`;
      this.peerFields[i] = text;
    }
    return text;
  }
}

/** Networks whose view is kept; the least recently used is dropped past this. */
const MAX_NETWORKS = 64;
const views = new Map<string, { key: string; view: Promise<NetworkView> }>();

const viewKey = (head: NetmapHead) => `${head.epoch}:${head.policyVersion}:${head.policyEtag}`;

/** The network's view for this head, loading it (once, for concurrent callers) on a miss. */
export function networkView(db: Db, networkId: string, head: NetmapHead, reload = false): Promise<NetworkView> {
  const key = viewKey(head);
  const hit = views.get(networkId);
  if (hit && hit.key === key && !reload) {
    views.delete(networkId);
    views.set(networkId, hit);
    return hit.view;
  }
  const view = loadView(db, networkId, key);
  views.delete(networkId);
  views.set(networkId, { key, view });
  if (views.size > MAX_NETWORKS) views.delete(views.keys().next().value as string);
  view.catch(() => {
    if (views.get(networkId)?.view === view) views.delete(networkId);
  });
  return view;
}

async function loadView(db: Db, networkId: string, key: string): Promise<NetworkView> {
  // Read after the head that names this view: a change committed in between makes the view
  // newer than its key, never older, and the next request's head reloads it.
  const [policy, rows, users] = await Promise.all([
    currentPolicy(db, networkId),
    deviceIdentities(db, networkId),
    policyUsers(db, networkId),
  ]);
  return new NetworkView(key, policy.compiled, rows, users);
}

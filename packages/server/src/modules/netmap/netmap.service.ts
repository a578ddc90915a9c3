/**
 * A device's netmap: itself (its detail record) and the peers the policy lets it reach or be
 * reached by, each with the addresses and the primary routes to put in allowedIPs.
 *
 * Versions. A device's `netmapVersion` changes when, and only when, its view changes: the view
 * (self without the volatile lastSeen, and every peer with its online flag) is hashed, and the
 * hash is compared with the one stored on the device; a different hash bumps the version
 * (a compare-and-set, so concurrent requests computing the same view bump it once). This runs
 * lazily, on each netmap request and each heartbeat, so the heartbeat's version tells an agent
 * when to fetch. A change to the network bumps only the devices whose view it changed.
 *
 * Cost: the peer map is cached per process and network (see netmap.cache.ts), presence is read
 * once per network and change (presence-snapshot.ts); building a netmap costs a few indexed
 * queries plus O(its peers), and a heartbeat or a conditional fetch whose view did not change
 * builds nothing.
 */
import { createHash } from 'node:crypto';
import type { DeviceBody } from '@warren/contract';
import type { AppContext } from '../../core/context.js';
import { entityTagsMatch } from '../../lib/entity-tags.js';
import { presentDeviceDetail } from '../devices/devices.presenter.js';
import { routesOfDevice } from '../devices/devices.repository.js';
import { settleVersion } from '../devices/netmap-version.js';
import { deviceGone } from '../devices/presence.service.js';
import { isIsolated } from '../devices/standing.js';
import { isOnline } from '../network/online.js';
import type { RouteRow } from '../routes/routes.repository.js';
import { networkView } from './netmap.cache.js';
import { type SelfRow, viewRows } from './netmap.repository.js';
import { joinedWithout } from './netmap-class-list.js';
import { diffPeers, rememberSent, sentAt, sinceVersion } from './netmap-delta.js';
import { type Primaries, primariesOf } from './netmap-primaries.js';
import type { NetworkView } from './netmap-view.js';
import { type PresenceSnapshot, presenceSnapshot } from './presence-snapshot.js';

export interface Netmap {
  version: number;
  /**
   * The JSON response body, serialized once: `{ self, peers, version }`, or a delta
   * `{ self, version, since, peersChanged, peersRemoved }`; absent when not needed.
   */
  body?: string;
}

/** Everything a device's view is made of, read for one request. */
interface ViewInputs {
  now: number;
  networkId: string;
  deviceId: string;
  self: SelfRow;
  /** The device's routes when they were read with the rest (netmap.repository.ts viewRows). */
  ownRoutes?: RouteRow[];
  view: NetworkView;
  primaries: Primaries;
  presence: PresenceSnapshot;
  /**
   * What, besides the view's own key, decides the device's netmap: the primary routers, the
   * presence of the network, and the device's own presence. Equal stamps, equal netmaps.
   */
  stamp: string;
}

/** A device outside netmaps (waiting for approval, login expired): itself and no peers. */
interface IsolatedInputs {
  isolated: true;
  now: number;
  networkId: string;
  deviceId: string;
  self: SelfRow;
  ownRoutes?: RouteRow[];
}

async function viewInputs(ctx: AppContext, networkId: string, deviceId: string): Promise<ViewInputs | IsolatedInputs> {
  const db = ctx.db;
  const now = ctx.clock.now();
  const rows = await viewRows(db, networkId, deviceId, now);
  if (!rows) throw deviceGone();
  const { head, self } = rows;
  if (isIsolated(self, now)) return { isolated: true, now, networkId, deviceId, self, ownRoutes: rows.ownRoutes };
  const [presence, loaded] = await Promise.all([
    presenceSnapshot(db, networkId, head, now),
    networkView(db, networkId, head),
  ]);
  let view = loaded;
  // A device always enrolls with an epoch bump, so it is in any view read after it could
  // authenticate; reload once in case it raced a deletion and re-creation.
  if (!view.index.has(deviceId)) view = await networkView(db, networkId, head, true);
  const primaries = primariesOf(rows.served);
  const stamp = `${primaries.key}|${presence.digest}|${isOnline(self, now)}`;
  return { now, networkId, deviceId, self, ownRoutes: rows.ownRoutes, view, primaries, presence, stamp };
}

/**
 * The device's netmap. With `ifNoneMatch`, the body is left out when the header names the
 * current version and that version is known without building the netmap (see netmapVersion).
 * With `delta`, the body holds only the peers changed or removed since the version the header
 * names, when this process sent that version to the device (netmap-delta.ts); else the full map.
 */
export async function deviceNetmap(
  ctx: AppContext,
  networkId: string,
  deviceId: string,
  ifNoneMatch?: string,
  delta = false,
): Promise<Netmap> {
  const inputs = await viewInputs(ctx, networkId, deviceId);
  if ('isolated' in inputs) {
    const netmap = await isolatedNetmap(ctx, inputs);
    return versionMatches(ifNoneMatch, netmap.version) ? { version: netmap.version } : netmap;
  }
  if (ifNoneMatch !== undefined) {
    const known = rememberedVersion(inputs);
    if (known !== undefined && versionMatches(ifNoneMatch, known)) return { version: known };
  }
  return buildNetmap(ctx, inputs, delta ? sinceVersion(ifNoneMatch) : undefined);
}

/**
 * The device's full netmap and the network view it was built from (none for a device outside
 * netmaps): what the Tailscale protocol shares between every map stream of the network, so the
 * policy, its users and the devices' identities are read once per change, not once per stream.
 */
export async function netmapWithView(
  ctx: AppContext,
  networkId: string,
  deviceId: string,
): Promise<{ netmap: Netmap; view?: NetworkView }> {
  const inputs = await viewInputs(ctx, networkId, deviceId);
  if ('isolated' in inputs) return { netmap: await isolatedNetmap(ctx, inputs) };
  return { netmap: await buildNetmap(ctx, inputs), view: inputs.view };
}

/**
 * The device's current netmap version, for heartbeats. When nothing the view depends on has
 * changed since this instance last built the device's netmap, and no other instance has
 * settled a different one since, this costs the few indexed reads of viewInputs and no work
 * per peer; otherwise the netmap is built (and its version settled) as for a fetch.
 */
export async function netmapVersion(ctx: AppContext, networkId: string, deviceId: string): Promise<number> {
  const inputs = await viewInputs(ctx, networkId, deviceId);
  if ('isolated' in inputs) return (await isolatedNetmap(ctx, inputs)).version;
  return rememberedVersion(inputs) ?? (await settle(ctx, inputs)).version;
}

/**
 * The netmap of a device outside netmaps: its own record (which says why: `authorized`,
 * `keyExpired`, `keyExpiry`) and no peers, versioned like any other view, so an agent fetches
 * it when it is cut off and again when it is let back in. Always a full map, never a delta.
 */
async function isolatedNetmap(ctx: AppContext, inputs: IsolatedInputs): Promise<Netmap> {
  const { now, networkId, deviceId, self } = inputs;
  const selfRoutes = inputs.ownRoutes ?? (await routesOfDevice(ctx.db, networkId, now, deviceId));
  const selfBody = presentDeviceDetail(self, now, selfRoutes);
  const hash = createHash('sha256')
    .update(JSON.stringify({ ...selfBody, lastSeen: null }))
    .update('\nisolated')
    .digest('hex')
    .slice(0, 32);
  const version = await settleVersion(ctx.db, deviceId, self, hash);
  if (version === undefined) throw deviceGone();
  return { version, body: `{"self":${JSON.stringify(selfBody)},"peers":[],"version":${version}}` };
}

function rememberedVersion({ view, deviceId, self, stamp }: ViewInputs): number | undefined {
  const memo = view.versions.get(deviceId);
  if (memo && memo.stamp === stamp && memo.hash === self.netmap_hash) return Number(self.netmap_version);
  return undefined;
}

/**
 * Settles the device's version from the hash of its view: its own record (without the volatile
 * lastSeen) and the fingerprint of its peers and their presence (NetworkView.fingerprint), which
 * costs no per-peer work for a device that sees everyone. Returns the version and the record.
 */
async function settle(ctx: AppContext, inputs: ViewInputs): Promise<{ version: number; selfBody: DeviceBody }> {
  const { now, networkId, deviceId, self, view, primaries, presence } = inputs;
  const selfRoutes = inputs.ownRoutes ?? (await routesOfDevice(ctx.db, networkId, now, deviceId));
  const selfBody = presentDeviceDetail(self, now, selfRoutes);
  const hash = createHash('sha256')
    .update(JSON.stringify({ ...selfBody, lastSeen: null }))
    .update('\n')
    .update(view.fingerprint(primaries, deviceId, presence))
    .digest('hex')
    .slice(0, 32);
  const version = await settleVersion(ctx.db, deviceId, self, hash);
  if (version === undefined) throw deviceGone();
  view.versions.set(deviceId, { stamp: inputs.stamp, hash });
  return { version, selfBody };
}

async function buildNetmap(ctx: AppContext, inputs: ViewInputs, since?: number): Promise<Netmap> {
  const { deviceId, view, primaries, presence } = inputs;
  const { version, selfBody } = await settle(ctx, inputs);
  const self = JSON.stringify(selfBody);
  const everyone = view.everyonePeers(primaries, deviceId, presence);
  const peers = everyone?.list.peers ?? view.listedPeers(primaries, deviceId, presence);
  const skip = everyone?.skip ?? -1;
  const before = since === undefined || since === version ? undefined : sentAt(deviceId, since);
  rememberSent(deviceId, version, peers, skip);
  if (before) {
    const { changed, removed } = diffPeers(before.peers, before.skip, peers, skip);
    return {
      version,
      body: `{"self":${self},"version":${version},"since":${since},"peersChanged":[${changed.join(',')}],"peersRemoved":${JSON.stringify(removed)}}`,
    };
  }
  const peersJson = everyone ? joinedWithout(everyone.list, skip) : `[${peers.texts.join(',')}]`;
  return { version, body: `{"self":${self},"peers":${peersJson},"version":${version}}` };
}

/**
 * `If-None-Match` holds this version: quoted or bare, possibly weak, possibly in a list, or `*`
 * — the rule every conditional read of /v1 follows (lib/entity-tags.ts; the netmap's ETag is
 * its version, quoted).
 */
export function versionMatches(header: string | undefined, version: number): boolean {
  return header ? entityTagsMatch(header, String(version), 'weak') : false;
}

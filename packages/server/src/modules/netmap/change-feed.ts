/**
 * One per process: what the open map streams wait on instead of reading the database in a loop.
 * The process hears that a network moved (storage/change-signal.ts: LISTEN/NOTIFY on
 * PostgreSQL, the committing connection on SQLite), reads that network's head once and the
 * change logs since the head it read before once, looks up the peers of the few devices a
 * netmap change was about, then hands that to every session of the network it serves. A change
 * costs this process a few small reads whatever the number of sessions; each session then
 * decides in memory from what it holds whether the change concerns it (a device it does not
 * see and that does not see it, for instance, does not), and only those build a map.
 */
import { channel } from 'node:diagnostics_channel';
import type { AppContext } from '../../core/context.js';
import { changedSince } from '../network/netmap-changes.js';
import { presenceChangedSince } from '../network/presence-changes.js';
import { type NetmapHead, netmapHead, servesRoutes } from './netmap.repository.js';
import { deviceNetmap } from './netmap.service.js';

export interface NetworkChange {
  head: NetmapHead;
  /** headKey(head), made once for every session that compares it with its own. */
  key: string;
  /**
   * Which devices the change was about, when the change logs say so for every epoch since
   * the head before it, whose key is `previousKey` (absent: any session may be concerned). A
   * session whose map was made at that head is concerned only when one of `changed` is among its peers (it changed, went
   * online or offline, or was removed) or its own device is in `reach` (it changed itself, or
   * one of `changed` now counts it among its peers).
   */
  devices?: { previousKey: string; changed: ReadonlySet<string>; reach: ReadonlySet<string> };
  /**
   * Every move since the head before it was a policy's own, presence as it was: a policy's
   * transaction moves the netmap epoch once (the view is keyed by it) and the policy version
   * once, so as many moves of each leave no room for another change. A session current at the
   * head before (it handled every change it was told of) holds the rows such a change leaves.
   */
  policyOnly?: true;
}

/** A change about anything at this head: every session looks at it. */
export const changeAt = (head: NetmapHead): NetworkChange => ({ head, key: headKey(head) });

/**
 * Devices changed by one burst of netmap moves beyond which sessions are not narrowed down:
 * each costs a look at that device's peers, and a change to that many devices concerns most
 * sessions anyway.
 */
const MAX_DEVICES_FOLLOWED = 64;

export type ChangeHandler = (change: NetworkChange) => void;

/**
 * Each change read, published as `{ networkId, previous, head, policyOnly, devices }` when
 * something subscribes (a benchmark's probe preloaded into the server, bench/soak-probe.mjs):
 * which heads a change was read between is what says why its streams built what they did.
 */
const reads = channel('warren:change-feed:read');

/**
 * Peers a session may name to be told only of changes about them (DeviceFollow.watch); one
 * with more is told of every change and judges it itself, rather than filling the index with
 * a device's whole network.
 */
const MAX_PEERS_WATCHED = 256;

/** A session about one device (a map stream), told only of the changes that can concern it. */
export interface DeviceFollow {
  /**
   * The peers of the map the session now holds. From then on a change the change logs narrow
   * down (NetworkChange.devices) is delivered only when one of these peers changed or the
   * device is within its reach; before the first call, and for a session with very many
   * peers, every change is.
   */
  watch(peers: Iterable<string>): void;
  /** While on (the session is building a map whose peers it does not know yet), every change is delivered. */
  broad(on: boolean): void;
  stop(): void;
}

interface Followed {
  /** Every handler of the network. */
  handlers: Set<ChangeHandler>;
  /** Handlers told of every change: plain follows, and device follows as DeviceFollowing says. */
  everything: Set<ChangeHandler>;
  /** Device id → the watchers of that device; → the watchers that hold it as a peer. */
  bySelf: Map<string, Set<ChangeHandler>>;
  byPeer: Map<string, Set<ChangeHandler>>;
  /** The head as last read, or undefined before the first read. */
  head?: NetmapHead;
  reading: boolean;
  /** A signal arrived during the read: read once more after it. */
  again: boolean;
}

export const headKey = (head: NetmapHead | undefined) =>
  head ? `${head.epoch}|${head.presenceEpoch}|${head.policyVersion}` : '';

/**
 * Whether head `a` comes before head `b`: no epoch of `a` is ahead of `b`'s, and they differ.
 * Every epoch only moves forward, so `a` was read before the change that made `b`.
 */
export const headPrecedes = (a: NetmapHead, b: NetmapHead) =>
  a.epoch <= b.epoch &&
  a.presenceEpoch <= b.presenceEpoch &&
  a.policyVersion <= b.policyVersion &&
  headKey(a) !== headKey(b);

function policyMovesOnly(previous: NetmapHead, head: NetmapHead): boolean {
  const policies = head.policyVersion - previous.policyVersion;
  return policies > 0 && head.epoch - previous.epoch === policies && head.presenceEpoch === previous.presenceEpoch;
}

export class ChangeFeed {
  private readonly networks = new Map<string, Followed>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly ctx: AppContext,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.unsubscribe = ctx.changes.subscribe({
      changed: (networkId) => this.changed(networkId),
      resync: () => {
        for (const networkId of this.networks.keys()) this.changed(networkId);
      },
    });
  }

  /** Calls `handler` after every committed move of the network's epochs until the returned stop. */
  follow(networkId: string, handler: ChangeHandler): () => void {
    const followed = this.followed(networkId);
    followed.handlers.add(handler);
    followed.everything.add(handler);
    return () => this.unfollow(networkId, followed, handler);
  }

  /**
   * As follow, for a session about `deviceId`: once it says which peers it holds, it is told
   * only of the changes that can concern it (DeviceFollow), so a change about a few devices
   * costs the sessions it concerns, not every session of the network.
   */
  followDevice(networkId: string, deviceId: string, handler: ChangeHandler): DeviceFollow {
    const followed = this.followed(networkId);
    followed.handlers.add(handler);
    followed.everything.add(handler);
    indexAdd(followed.bySelf, deviceId, handler);
    return new DeviceFollowing(followed, deviceId, handler, () => this.unfollow(networkId, followed, handler));
  }

  private followed(networkId: string): Followed {
    let followed = this.networks.get(networkId);
    if (!followed) {
      followed = {
        handlers: new Set(),
        everything: new Set(),
        bySelf: new Map(),
        byPeer: new Map(),
        reading: false,
        again: false,
      };
      this.networks.set(networkId, followed);
    }
    return followed;
  }

  private unfollow(networkId: string, followed: Followed, handler: ChangeHandler): void {
    followed.handlers.delete(handler);
    followed.everything.delete(handler);
    if (followed.handlers.size === 0 && this.networks.get(networkId) === followed) this.networks.delete(networkId);
  }

  /**
   * The key of the network's head as this process last read it ('' before its first read): a
   * session that follows while it is its own map's head is told of every change after it.
   */
  headKeyOf(networkId: string): string {
    return headKey(this.networks.get(networkId)?.head);
  }

  /**
   * Whether `head` comes before the network's head as this process last read it. A session reads
   * the head once more just after it begins to follow; if the feed has meanwhile read a newer
   * one, it read it after the session began to follow (what committed before was in the
   * session's own read), so it has told the session of it, and the session's read is stale.
   */
  precedesHeadOf(networkId: string, head: NetmapHead): boolean {
    const last = this.networks.get(networkId)?.head;
    return last !== undefined && headPrecedes(head, last);
  }

  /** Sessions followed by this process (for its figures). */
  get sessions(): number {
    let count = 0;
    for (const followed of this.networks.values()) count += followed.handlers.size;
    return count;
  }

  close(): void {
    this.unsubscribe();
    this.networks.clear();
  }

  private changed(networkId: string): void {
    const followed = this.networks.get(networkId);
    if (!followed) return;
    if (followed.reading) {
      followed.again = true;
      return;
    }
    followed.reading = true;
    this.read(networkId, followed)
      .catch(this.onError)
      .finally(() => {
        followed.reading = false;
        if (followed.again) {
          followed.again = false;
          this.changed(networkId);
        }
      });
  }

  private async read(networkId: string, followed: Followed): Promise<void> {
    const head = await netmapHead(this.ctx.db, networkId);
    if (!head) return;
    const previous = followed.head;
    followed.head = head;
    if (previous && headKey(previous) === headKey(head)) return;
    const devices = previous && (await this.devicesChanged(networkId, previous, head));
    const policyOnly = previous !== undefined && policyMovesOnly(previous, head);
    const change: NetworkChange = {
      ...changeAt(head),
      ...(devices ? { devices } : {}),
      ...(policyOnly ? { policyOnly } : {}),
    };
    if (reads.hasSubscribers) {
      reads.publish({ networkId, previous, head, policyOnly, devices: devices?.changed.size });
    }
    if (!devices) {
      for (const handler of [...followed.handlers]) handler(change);
      return;
    }
    // Only the sessions the change can concern: those told of everything, those of a device it
    // reaches, those holding a device it changed as a peer. The others' maps stay current.
    const told = new Set(followed.everything);
    for (const id of devices.reach) for (const handler of followed.bySelf.get(id) ?? []) told.add(handler);
    for (const id of devices.changed) for (const handler of followed.byPeer.get(id) ?? []) told.add(handler);
    for (const handler of told) handler(change);
  }

  /**
   * What moved between two heads of the network, from the change logs, or undefined when
   * every session must look again: the policy moved, a log does not cover the range, more
   * devices changed than are worth following one by one, or a device that went online or
   * offline serves routes (its peers' primary routers may have moved with it).
   */
  private async devicesChanged(
    networkId: string,
    previous: NetmapHead,
    head: NetmapHead,
  ): Promise<NetworkChange['devices']> {
    const { db } = this.ctx;
    if (previous.policyVersion !== head.policyVersion || previous.policyEtag !== head.policyEtag) return undefined;
    const changed = new Set<string>();
    const reach = new Set<string>();
    if (head.presenceEpoch !== previous.presenceEpoch) {
      const ids = await presenceChangedSince(db, networkId, previous.presenceEpoch, head.presenceEpoch);
      if (!ids || (await servesRoutes(db, networkId, ids))) return undefined;
      for (const id of ids) {
        changed.add(id);
        reach.add(id);
      }
    }
    if (head.epoch !== previous.epoch) {
      const ids = await changedSince(db, networkId, previous.epoch, head.epoch);
      if (!ids || ids.length > MAX_DEVICES_FOLLOWED) return undefined;
      for (const id of ids) {
        changed.add(id);
        reach.add(id);
        // Whoever sees the device now may have just gained it as a peer (a device still here:
        // one that was deleted is only in the maps of those that had it).
        const netmap = await deviceNetmap(this.ctx, networkId, id).catch(() => undefined);
        const peers = netmap?.body ? (JSON.parse(netmap.body) as { peers?: { id: string }[] }).peers : undefined;
        for (const peer of peers ?? []) reach.add(peer.id);
      }
    }
    return { previousKey: headKey(previous), changed, reach };
  }
}

/**
 * One map stream's follow, held for as long as its device is connected: one object rather than
 * a closure per method over a state of its own. A session is told of every change before its
 * first watch, with too many peers, or while broad.
 */
class DeviceFollowing implements DeviceFollow {
  /** The peers in the index (none when too many). */
  private peers: string[] = [];
  private watched = false;
  private stopped = false;
  private tooMany = false;
  private broadly = false;

  constructor(
    private readonly followed: Followed,
    private readonly deviceId: string,
    private readonly handler: ChangeHandler,
    private readonly unfollow: () => void,
  ) {}

  watch(peers: Iterable<string>): void {
    if (this.stopped) return;
    const { followed, handler } = this;
    for (const peer of this.peers) indexDelete(followed.byPeer, peer, handler);
    const list = [...peers];
    this.watched = true;
    this.tooMany = list.length > MAX_PEERS_WATCHED;
    this.peers = this.tooMany ? [] : list;
    for (const peer of this.peers) indexAdd(followed.byPeer, peer, handler);
    this.place();
  }

  broad(on: boolean): void {
    if (this.stopped) return;
    this.broadly = on;
    this.place();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    const { followed, handler } = this;
    for (const peer of this.peers) indexDelete(followed.byPeer, peer, handler);
    this.peers = [];
    indexDelete(followed.bySelf, this.deviceId, handler);
    this.unfollow();
  }

  private place(): void {
    const { everything } = this.followed;
    if (!this.watched || this.tooMany || this.broadly) everything.add(this.handler);
    else everything.delete(this.handler);
  }
}

function indexAdd(index: Map<string, Set<ChangeHandler>>, id: string, handler: ChangeHandler): void {
  let set = index.get(id);
  if (!set) {
    set = new Set();
    index.set(id, set);
  }
  set.add(handler);
}

function indexDelete(index: Map<string, Set<ChangeHandler>>, id: string, handler: ChangeHandler): void {
  const set = index.get(id);
  if (!set) return;
  set.delete(handler);
  if (set.size === 0) index.delete(id);
}

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
import type { AppContext } from '../../core/context.js';
import { changedSince } from '../network/netmap-changes.js';
import { presenceChangedSince } from '../network/presence-changes.js';
import { type NetmapHead, netmapHead, servesRoutes } from './netmap.repository.js';
import { deviceNetmap } from './netmap.service.js';

export interface NetworkChange {
  head: NetmapHead;
  /**
   * Which devices the change was about, when the change logs say so for every epoch since
   * `previous` (absent: any session may be concerned). A session whose map was made at
   * `previous` is concerned only when one of `changed` is among its peers (it changed, went
   * online or offline, or was removed) or its own device is in `reach` (it changed itself, or
   * one of `changed` now counts it among its peers).
   */
  devices?: { previous: NetmapHead; changed: ReadonlySet<string>; reach: ReadonlySet<string> };
}

/**
 * Devices changed by one burst of netmap moves beyond which sessions are not narrowed down:
 * each costs a look at that device's peers, and a change to that many devices concerns most
 * sessions anyway.
 */
const MAX_DEVICES_FOLLOWED = 64;

export type ChangeHandler = (change: NetworkChange) => void;

interface Followed {
  handlers: Set<ChangeHandler>;
  /** The head as last read, or undefined before the first read. */
  head?: NetmapHead;
  reading: boolean;
  /** A signal arrived during the read: read once more after it. */
  again: boolean;
}

export const headKey = (head: NetmapHead | undefined) =>
  head ? `${head.epoch}|${head.presenceEpoch}|${head.policyVersion}` : '';

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
    let followed = this.networks.get(networkId);
    if (!followed) {
      followed = { handlers: new Set(), reading: false, again: false };
      this.networks.set(networkId, followed);
    }
    followed.handlers.add(handler);
    const handlers = followed.handlers;
    return () => {
      handlers.delete(handler);
      if (handlers.size === 0 && this.networks.get(networkId)?.handlers === handlers) this.networks.delete(networkId);
    };
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
    const change: NetworkChange = { head, ...(devices ? { devices } : {}) };
    for (const handler of [...followed.handlers]) handler(change);
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
    return { previous, changed, reach };
  }
}

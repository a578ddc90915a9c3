/**
 * One per process: what the open map streams wait on instead of reading the database in a loop.
 * The process hears that a network moved (storage/change-signal.ts: LISTEN/NOTIFY on
 * PostgreSQL, the committing connection on SQLite), reads that network's head once, and, when
 * only presence moved since the head it read before, the presence change log once, then hands
 * both to every session of the network it serves. A change costs this process one or two small
 * reads whatever the number of sessions; each session then decides from what it holds whether
 * the change concerns it (an update to a peer it does not have, for instance, does not).
 */
import type { ChangeChannel } from '../../storage/change-signal.js';
import type { Db } from '../../storage/database.js';
import { presenceChangedSince } from '../network/presence-changes.js';
import { type NetmapHead, netmapHead } from './netmap.repository.js';

export interface NetworkChange {
  head: NetmapHead;
  /**
   * When only the presence epoch moved since `previous`: the devices that came online or went
   * offline in between. Absent when anything else moved too, or the log does not cover it.
   */
  presence?: { previous: NetmapHead; devices: ReadonlySet<string> };
}

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
    private readonly db: Db,
    channel: ChangeChannel,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.unsubscribe = channel.subscribe({
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
    const head = await netmapHead(this.db, networkId);
    if (!head) return;
    const previous = followed.head;
    followed.head = head;
    if (previous && headKey(previous) === headKey(head)) return;
    let presence: NetworkChange['presence'];
    if (
      previous &&
      previous.epoch === head.epoch &&
      previous.policyVersion === head.policyVersion &&
      previous.presenceEpoch < head.presenceEpoch
    ) {
      const devices = await presenceChangedSince(this.db, networkId, previous.presenceEpoch, head.presenceEpoch);
      if (devices) presence = { previous, devices: new Set(devices) };
    }
    const change: NetworkChange = { head, ...(presence ? { presence } : {}) };
    for (const handler of [...followed.handlers]) handler(change);
  }
}

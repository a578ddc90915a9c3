/**
 * Device list response bodies, kept per network, filter and kind (list or detail records)
 * while nothing they show can have changed: the network's index is at the generation the body
 * was made from (no device added, removed, re-tagged, renamed, or seen since), no device the
 * filter looks at has timed out (the index says when the first one will), and, for detail
 * records, the network's routes read by this call are the ones the body was made with. A
 * dashboard polling the 1,000-device list then costs one cursor read instead of a thousand
 * records joined again.
 *
 * The kept bytes are bounded; the least recently made bodies are dropped first.
 */
import type { IndexFilter, NetworkDevices } from './device-index.js';

/** What a body was made from, and so what it is valid for. */
export interface BodyMade {
  filter: IndexFilter;
  devices: NetworkDevices;
  generation: number;
  madeAt: number;
  validUntil: number;
  /** The network's routes as the call read them (routesText); '' for list records. */
  routes: string;
}

export type BodyKind = 'list' | 'details';

interface KeptBody extends BodyMade {
  body: Buffer;
}

export class ListBodies {
  private readonly kept = new Map<string, KeptBody>();
  private bytes = 0;

  constructor(private readonly maxBytes = 32 * 2 ** 20) {}

  /**
   * The body kept for this kind and filter of the network, if it is still the answer for a
   * call at `current.madeAt` that read `current.devices` and `current.routes`.
   */
  get(kind: BodyKind, networkId: string, current: BodyMade, now: number): Buffer | undefined {
    const key = keyOf(kind, networkId, current.filter);
    const hit = this.kept.get(key);
    if (!hit) return undefined;
    const { devices } = current;
    if (
      hit.devices === devices &&
      hit.generation === devices.generation &&
      hit.routes === current.routes &&
      now >= hit.madeAt &&
      now < hit.validUntil
    ) {
      return hit.body;
    }
    this.drop(key, hit);
    return undefined;
  }

  /** Keeps a body made from `made`; one whose index moved while it was being made is not kept. */
  keep(kind: BodyKind, networkId: string, made: BodyMade, body: Buffer): void {
    if (made.devices.generation !== made.generation || body.length > this.maxBytes) return;
    const key = keyOf(kind, networkId, made.filter);
    const old = this.kept.get(key);
    if (old) this.drop(key, old);
    this.kept.set(key, { ...made, body });
    this.bytes += body.length;
    for (const [oldest, entry] of this.kept) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(oldest, entry);
    }
  }

  private drop(key: string, entry: KeptBody): void {
    this.kept.delete(key);
    this.bytes -= entry.body.length;
  }
}

/**
 * Tags are ANDed, so their order does not change the answer. Parts are joined by a NUL, which
 * none can hold: the kind and the network id are server-made, tags are checked against the tag
 * pattern, and the user, text from the query, goes in as JSON. Built on every list call, this
 * costs a fraction of the JSON text of the whole filter it replaced.
 */
function keyOf(kind: BodyKind, networkId: string, filter: IndexFilter): string {
  const tags = filter.tags.length < 2 ? filter.tags : [...filter.tags].sort();
  const user = filter.user === undefined ? '' : JSON.stringify(filter.user);
  return `${kind}\u0000${networkId}\u0000${filter.online ?? ''}\u0000${user}\u0000${tags.join('\u0000')}`;
}

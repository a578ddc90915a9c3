/**
 * Device list response bodies, kept per network, shape and filter while nothing they show can
 * have changed: what the call read the selection from is at the version the body was made from
 * (on SQLite the network's index and its generation: no device added, removed, re-tagged,
 * renamed or seen since; on PostgreSQL the network's list stamp), no device the filter looks at
 * has timed out (the selection says when the first one will), and, for detail records, the
 * network's routes read by this call are the ones the body was made with. A dashboard polling
 * the 1,000-device list then costs one cheap read instead of a thousand records joined again.
 *
 * Every shape shares this: `/v1/devices` in its forms and `/api/v2`'s device list, each a shape
 * of the same kept records (devices.service.ts). A body is built once per change: callers that
 * arrive while it is being built for the same version wait for that build instead of making
 * their own copy (after a heartbeat, 32 concurrent pollers used to build 32 bodies of 600 kB).
 *
 * And one build at a time per body: a caller that read a later version than the build in
 * flight waits for it, and every caller that waited then shares one build started after all of
 * them arrived, whose reads (the selection, the rows) are therefore at least as new as what
 * each of them read. With 10,000 devices a heartbeat lands every few milliseconds, and each
 * one used to start another build beside those in flight: builds of megabytes piled up on the
 * event loop faster than they finished, and the server stopped answering anything.
 *
 * A body that no longer serves is not thrown away at once: its segments (list-assembly.ts) are
 * handed to the next build of the same body, which renders again only the devices that moved.
 *
 * The kept bytes are bounded; the least recently made bodies are dropped first.
 */
import type { IndexFilter } from './device-index.js';
import type { ListAssembly } from './list-assembly.js';

/** What a body was made from, and so what it is valid for. */
export interface BodyMade {
  filter: IndexFilter;
  /** What the selection was read from (SQLite: the network's index), undefined if nothing kept. */
  source: object | undefined;
  /** Its version when read (the index's generation, or the network's list stamp). */
  version: number | string;
  madeAt: number;
  validUntil: number;
  /** The network's routes as the call read them (routesText); '' for shapes without routes. */
  routes: string;
}

interface KeptBody extends BodyMade {
  body: Buffer;
  /** The build that made it (Building.seq). */
  seq: number;
  /** Its segments, for the next build of the same body; they are views of `body`. */
  assembly: ListAssembly | undefined;
  /** False once it no longer answers: kept only for its segments. */
  serving: boolean;
}

/** A body, and until when it holds with nothing written (the first timeout of a device it looks at). */
export interface Built {
  body: Buffer;
  validUntil: number;
  /** The body as segments, which the next build of it may reuse. */
  assembly?: ListAssembly;
}

interface Building extends BodyMade {
  built: Promise<Built>;
  /**
   * Settles once the build has left `building`, after its `stillCurrent` check. Callers that
   * wait their turn wait for this, not for `built`: `stillCurrent` may await the database, and a
   * caller looping on an already-settled `built` would spin on microtasks and never let that
   * answer in.
   */
  finished: Promise<void>;
  /** Its place among the builds started (ListBodies.started): later callers may share it. */
  seq: number;
}

/** Whether a body made from `made` shows what a call that read `current` at `now` must. */
const sameRead = (made: BodyMade, current: BodyMade, now: number) =>
  made.source === current.source &&
  made.version === current.version &&
  made.routes === current.routes &&
  now >= made.madeAt;

/**
 * Whether a body built as `made` may answer a call that read `current` when `arrived` builds
 * had started: one made from the same read, or one whose build started after the call arrived
 * from the same source and routes, which selected and read its rows after the call's own read
 * and so shows at least as much.
 */
const serves = (made: BodyMade & { seq: number }, current: BodyMade, now: number, arrived: number) =>
  sameRead(made, current, now) ||
  (made.seq > arrived && made.source === current.source && made.routes === current.routes);

export class ListBodies {
  private readonly kept = new Map<string, KeptBody>();
  private readonly building = new Map<string, Building>();
  private bytes = 0;
  /** Builds started so far: a build numbered past a caller's arrival read after it arrived. */
  private started = 0;

  constructor(private readonly maxBytes = 32 * 2 ** 20) {}

  /**
   * The body of `shape` for the network's filter as a call at `now` that read `current` must
   * answer: the kept one if it still is, the one being built from the same read, or a new one
   * from `build`. `stillCurrent`, asked once the body is built, says whether nothing it shows
   * moved while it was being built; only then does it answer later calls (its segments are
   * kept either way, for the next build, which `build` is given). `current.validUntil` is not
   * read: a body's validity comes with it from `build`.
   */
  async body(
    shape: string,
    networkId: string,
    current: BodyMade,
    now: number,
    build: (previous: ListAssembly | undefined) => Promise<Built>,
    stillCurrent: () => boolean | Promise<boolean>,
  ): Promise<Buffer> {
    const key = keyOf(shape, networkId, current.filter);
    const arrived = this.started;
    for (;;) {
      const hit = this.kept.get(key);
      if (hit?.serving) {
        if (serves(hit, current, now, arrived) && now < hit.validUntil) return hit.body;
        hit.serving = false;
      }
      const inFlight = this.building.get(key);
      if (!inFlight) break;
      // A build that serves this call is shared; any other is waited for, and then built once
      // for every caller that waited.
      if (serves(inFlight, current, now, arrived)) {
        const shared = await inFlight.built;
        if (now < shared.validUntil) return shared.body;
        break;
      }
      await inFlight.finished;
    }
    // Builds of one body run one at a time, so the segments handed over are not being replaced.
    const built = build(this.kept.get(key)?.assembly);
    let finish = () => {};
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const building = { ...current, built, finished, seq: ++this.started };
    this.building.set(key, building);
    try {
      const made = await built;
      if (made.body.length <= this.maxBytes) {
        const serving = await stillCurrent();
        this.keep(key, {
          ...current,
          validUntil: made.validUntil,
          body: made.body,
          seq: building.seq,
          assembly: made.assembly,
          serving,
        });
      }
      return made.body;
    } finally {
      if (this.building.get(key) === building) this.building.delete(key);
      finish();
    }
  }

  private keep(key: string, entry: KeptBody): void {
    const old = this.kept.get(key);
    if (old) this.drop(key, old);
    this.kept.set(key, entry);
    this.bytes += entry.body.length;
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
 * none can hold: the shape and the network id are server-made (a shape's own filters go in as
 * JSON), tags are checked against the tag pattern, and the user, text from the query, goes in
 * as JSON. Built on every list call, this costs a fraction of the JSON text of the whole
 * filter it replaced.
 */
function keyOf(shape: string, networkId: string, filter: IndexFilter): string {
  const tags = filter.tags.length < 2 ? filter.tags : [...filter.tags].sort();
  const user = filter.user === undefined ? '' : JSON.stringify(filter.user);
  return `${shape}\u0000${networkId}\u0000${filter.online ?? ''}\u0000${user}\u0000${tags.join('\u0000')}`;
}

/**
 * The online devices of a presence snapshot: an immutable set that a new snapshot derives from
 * its predecessor by the devices that left and joined, without copying the rest. Copying a
 * 10,000-member set took 2 ms, and a fleet timing out or coming back device by device makes a
 * snapshot per request that needs one. Changes collect beside a shared base set until they
 * reach an eighth of it; then the set is copied once, so membership tests stay three lookups.
 */
export class OnlineSet implements Iterable<string> {
  /** Invariants: `removed` ⊆ `base`, and `added` shares no member with `base`. */
  private constructor(
    private readonly base: ReadonlySet<string>,
    private readonly removed: ReadonlySet<string>,
    private readonly added: ReadonlySet<string>,
  ) {}

  static of(ids: Iterable<string>): OnlineSet {
    return new OnlineSet(new Set(ids), new Set(), new Set());
  }

  has(id: string): boolean {
    return this.added.has(id) || (this.base.has(id) && !this.removed.has(id));
  }

  get size(): number {
    return this.base.size - this.removed.size + this.added.size;
  }

  /** This set less `left` (each a member) and with `joined` (each not a member). */
  changed(left: readonly string[], joined: readonly string[] = []): OnlineSet {
    if (left.length === 0 && joined.length === 0) return this;
    if ((this.removed.size + this.added.size + left.length + joined.length) * 8 > this.base.size) {
      const gone = new Set(left);
      const rest = new Set<string>();
      for (const id of this) if (!gone.has(id)) rest.add(id);
      for (const id of joined) rest.add(id);
      return new OnlineSet(rest, new Set(), new Set());
    }
    const removed = new Set(this.removed);
    const added = new Set(this.added);
    for (const id of left) {
      if (!added.delete(id)) removed.add(id);
    }
    for (const id of joined) {
      if (!removed.delete(id)) added.add(id);
    }
    return new OnlineSet(this.base, removed, added);
  }

  *[Symbol.iterator](): Iterator<string> {
    for (const id of this.base) if (!this.removed.has(id)) yield id;
    yield* this.added;
  }
}

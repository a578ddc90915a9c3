/**
 * A view's device id → slot lookup (netmap-view.ts), shared along a line of views that each
 * appended devices to the one before.
 *
 * Enrolling a fleet patches the network's view once per enrollment, and every patch adds a
 * device. Copying the id → slot map for each (10,000 entries: about 2 ms) made an enrollment
 * cost grow with the fleet. Instead, the latest view of a line adds its new ids to the map it
 * shares with the views before it, and each view answers only for slots below its own size:
 *  - a device keeps its slot across same-slots patches (changed rows are replaced where they
 *    are, new ones appended), so every entry an earlier view can see is still its own;
 *  - an id added later sits at or above the size of every view before the one that added it,
 *    so those views do not see it.
 * Only the view at the tip of the line (whose size is the map's) may append in place; appending
 * to an earlier one (two patches from one view) copies the entries it sees, so no view ever sees
 * another line's devices. A patch that removes a device renumbers the slots and starts anew.
 */

/** The map a line of views shares, and the size of the latest view that appended to it. */
interface Shared {
  slots: Map<string, number>;
  size: number;
}

export class SlotIndex {
  private constructor(
    private readonly shared: Shared,
    /** Slots below this are the view's. */
    readonly size: number,
  ) {}

  /** An index of `ids` at slots 0, 1, …, shared with no other. */
  static of(ids: readonly string[]): SlotIndex {
    const slots = new Map<string, number>();
    for (let i = 0; i < ids.length; i++) slots.set(ids[i], i);
    return new SlotIndex({ slots, size: ids.length }, ids.length);
  }

  get(id: string): number | undefined {
    const slot = this.shared.slots.get(id);
    return slot !== undefined && slot < this.size ? slot : undefined;
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  /**
   * This index with `ids` (none of which it holds) at slots size, size + 1, …: in the shared map
   * when this index is the latest of its line, else in a copy of the entries it sees.
   */
  appended(ids: readonly string[]): SlotIndex {
    if (ids.length === 0) return this;
    let shared = this.shared;
    if (shared.size !== this.size) {
      const slots = new Map<string, number>();
      for (const [id, slot] of shared.slots) if (slot < this.size) slots.set(id, slot);
      shared = { slots, size: this.size };
    }
    for (let k = 0; k < ids.length; k++) shared.slots.set(ids[k], this.size + k);
    shared.size = this.size + ids.length;
    return new SlotIndex(shared, shared.size);
  }
}

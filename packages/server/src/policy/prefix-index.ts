// Which of a fixed set of prefixes overlap a given address or prefix, in O(log n + answer).
// CIDR prefixes are either nested or disjoint, so they form a forest: sorted by start (bigger
// first on a tie), every prefix holding a point is an ancestor of the last prefix starting at or
// before that point.

import type { KeyRange } from './cidr.js';

export class PrefixTree {
  /** Ids in sorted order. */
  private readonly order: number[];
  private readonly starts: string[];
  /** Parent (nearest enclosing prefix) of each sorted position, or -1. */
  private readonly parent: Int32Array;

  /**
   * `sorted` is the order of `prefixes` when a tree of the same prefixes already gave it
   * (sortedOrder): sorting is the costly part of building, and can be done on another thread.
   */
  constructor(
    private readonly prefixes: readonly KeyRange[],
    sorted?: ArrayLike<number>,
  ) {
    if (sorted && sorted.length === prefixes.length) this.order = Array.from(sorted);
    else {
      this.order = prefixes.map((_, i) => i);
      this.order.sort((a, b) => {
        const pa = prefixes[a];
        const pb = prefixes[b];
        if (pa.start !== pb.start) return pa.start < pb.start ? -1 : 1;
        return pa.end === pb.end ? 0 : pa.end > pb.end ? -1 : 1;
      });
    }
    this.starts = this.order.map((id) => prefixes[id].start);
    this.parent = new Int32Array(this.order.length);
    const open: number[] = [];
    for (let pos = 0; pos < this.order.length; pos++) {
      const p = prefixes[this.order[pos]];
      while (open.length > 0 && prefixes[this.order[open[open.length - 1]]].end < p.start) open.pop();
      this.parent[pos] = open.length > 0 ? open[open.length - 1] : -1;
      open.push(pos);
    }
  }

  /** Ids in sorted order, for building a tree of the same prefixes elsewhere. */
  sortedOrder(): Int32Array {
    return Int32Array.from(this.order);
  }

  get size(): number {
    return this.order.length;
  }

  /** Appends to `out` the ids of every prefix overlapping `q` (each once). */
  overlapping(q: KeyRange, out: number[]): void {
    const { starts, order, parent, prefixes } = this;
    if (starts.length === 0) return;
    // Last position whose start <= q.start.
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] <= q.start) lo = mid + 1;
      else hi = mid;
    }
    // Prefixes starting at or before q.start overlap q iff they hold q.start: that is the chain
    // of ancestors from the first one (walking up) whose end reaches q.start.
    let pos = lo - 1;
    while (pos >= 0 && prefixes[order[pos]].end < q.start) pos = parent[pos];
    for (; pos >= 0; pos = parent[pos]) out.push(order[pos]);
    // Prefixes starting inside (q.start, q.end] overlap q too.
    for (let i = lo; i < starts.length && starts[i] <= q.end; i++) out.push(order[i]);
  }
}

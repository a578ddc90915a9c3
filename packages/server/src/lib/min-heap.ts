/**
 * A binary min-heap of items ordered by a numeric key: the smallest first. For queues of
 * deadlines, where a sorted array would pay O(n) per insertion and a scan O(n) per lookup.
 */
export class MinHeap<T> {
  private readonly items: T[];

  /** Heapified in O(n). */
  constructor(
    private readonly keyOf: (item: T) => number,
    items: Iterable<T> = [],
  ) {
    this.items = [...items];
    for (let i = (this.items.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    this.items.push(item);
    this.up(this.items.length - 1);
  }

  pop(): T | undefined {
    const { items } = this;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      this.down(0);
    }
    return top;
  }

  private up(i: number): void {
    const { items, keyOf } = this;
    const item = items[i]!;
    const key = keyOf(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (keyOf(items[parent]!) <= key) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = item;
  }

  private down(i: number): void {
    const { items, keyOf } = this;
    const n = items.length;
    const item = items[i]!;
    const key = keyOf(item);
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && keyOf(items[child + 1]!) < keyOf(items[child]!)) child++;
      if (keyOf(items[child]!) >= key) break;
      items[i] = items[child]!;
      i = child;
    }
    items[i] = item;
  }
}

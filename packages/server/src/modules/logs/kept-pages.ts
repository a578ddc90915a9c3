/**
 * Full pages of the audit log, kept as their response bodies. The audit log is append-only
 * (no entry is ever changed or removed) and, on SQLite, numbered in commit order: one writer
 * at a time, each entry numbered above every entry committed before it. A page that was read
 * full, with an entry after it, therefore holds the same entries whenever it is read again:
 * anything written later is numbered after it. A page that reached the log's end is never
 * kept, since the next entry belongs on it.
 *
 * Not on PostgreSQL: numbers taken by concurrent transactions become visible out of order, so
 * an entry could still join a page that was read full.
 *
 * The events log is kept the same way, with what its caller needs to check that retention
 * removed none of a page's entries since (`V` carries it beside the body).
 *
 * The kept bytes are bounded; the least recently kept pages are dropped first.
 */
export class KeptPages<V extends { byteLength: number } = Buffer> {
  private readonly kept = new Map<string, V>();
  private bytes = 0;

  constructor(private readonly maxBytes = 16 * 2 ** 20) {}

  get(key: string): V | undefined {
    return this.kept.get(key);
  }

  keep(key: string, page: V): void {
    const old = this.kept.get(key);
    if (old) this.bytes -= old.byteLength;
    this.kept.delete(key);
    if (page.byteLength > this.maxBytes) return;
    this.kept.set(key, page);
    this.bytes += page.byteLength;
    for (const [oldest, entry] of this.kept) {
      if (this.bytes <= this.maxBytes) break;
      this.kept.delete(oldest);
      this.bytes -= entry.byteLength;
    }
  }

  /** Drops a page found stale. */
  drop(key: string): void {
    const old = this.kept.get(key);
    if (!old) return;
    this.bytes -= old.byteLength;
    this.kept.delete(key);
  }
}

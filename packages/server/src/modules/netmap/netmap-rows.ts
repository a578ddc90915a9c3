/**
 * The device rows of a patched view: the rows of the view it comes from with the changed
 * devices read again, and for each row where it was before (netmap-view.ts derives the rest
 * from that).
 */
import type { DeviceIdentityRow } from './policy-inputs.repository.js';

export interface MergedRows {
  rows: DeviceIdentityRow[];
  /** from[i]: the index before of the unchanged device at i; -1 for a changed or new one. */
  from: Int32Array;
  /** No device left: every unchanged device is where it was, and new ones come last. */
  sameSlots: boolean;
}

/**
 * `before` with the devices `changedIds` names replaced by their rows in `fresh` (those that
 * still exist, in the order of the view's query): replaced in place, removed when they have no
 * row, appended when they are new. `index` maps the ids of `before` to their indexes.
 */
export function mergeRows(
  before: readonly DeviceIdentityRow[],
  index: Pick<ReadonlyMap<string, number>, 'get'>,
  fresh: readonly DeviceIdentityRow[],
  changedIds: Iterable<string>,
): MergedRows {
  const byId = new Map(fresh.map((row) => [row.id, row]));
  const changedAt: number[] = [];
  let removed = false;
  for (const id of new Set(changedIds)) {
    const j = index.get(id);
    if (j === undefined) continue;
    changedAt.push(j);
    if (!byId.has(id)) removed = true;
  }
  if (!removed) {
    const rows = before.slice();
    const from = new Int32Array(rows.length + byId.size - changedAt.length);
    for (let i = 0; i < rows.length; i++) from[i] = i;
    for (const j of changedAt) {
      const id = before[j].id;
      rows[j] = byId.get(id)!;
      byId.delete(id);
      from[j] = -1;
    }
    for (const row of byId.values()) {
      from[rows.length] = -1;
      rows.push(row);
    }
    return { rows, from, sameSlots: true };
  }
  const gone = new Set(changedAt);
  const rows: DeviceIdentityRow[] = [];
  const from: number[] = [];
  for (let j = 0; j < before.length; j++) {
    const id = before[j].id;
    const row = gone.has(j) ? byId.get(id) : before[j];
    byId.delete(id);
    if (!row) continue;
    rows.push(row);
    from.push(gone.has(j) ? -1 : j);
  }
  for (const row of byId.values()) {
    rows.push(row);
    from.push(-1);
  }
  return { rows, from: Int32Array.from(from), sameSlots: false };
}

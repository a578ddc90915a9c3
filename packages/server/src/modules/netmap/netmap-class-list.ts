/**
 * Class lists: every device of a view as the members of one identity class see it, as JSON
 * texts and as the one joined text a netmap is cut from. A device that sees everyone is sent
 * its class's list less its own entry, so a list is made once per class and presence snapshot
 * and shared by the whole class (netmap-view.ts).
 */
import type { ServedPeers } from './netmap-delta.js';
import type { PresenceSnapshot } from './presence-snapshot.js';

/** Every device of a view as the members of one class see it, for one presence snapshot. */
export interface ClassList {
  presence: PresenceSnapshot;
  /** The peers' ids and texts, index-aligned with the view's devices (netmap-delta.ts). */
  peers: ServedPeers;
  joined: string;
  /** starts[i]: where device i's entry begins in `joined`; starts[n]: its length + 1. */
  starts: Int32Array;
}

/** The list of the devices `ids`, entry i being `textOf(i)`. */
export function makeClassList(
  ids: readonly string[],
  presence: PresenceSnapshot,
  textOf: (i: number) => string,
): ClassList {
  const n = ids.length;
  const parts: string[] = new Array(n);
  const starts = new Int32Array(n + 1);
  for (let i = 0, at = 0; i < n; i++) {
    parts[i] = textOf(i);
    starts[i] = at;
    at += parts[i].length + 1;
    starts[i + 1] = at;
  }
  return { presence, peers: { ids, texts: parts }, joined: parts.join(','), starts };
}

/**
 * `list` with the entries `changed` (ascending) made again by `textOf` and spliced into its
 * text; the devices are the same (`ids` names the same ids in the same order).
 */
export function patchClassList(
  list: ClassList,
  ids: readonly string[],
  changed: readonly number[],
  textOf: (i: number) => string,
): ClassList {
  const texts = list.peers.texts.slice();
  const starts = list.starts.slice();
  // Concatenated, not joined: V8 keeps the result as a rope of slices of the old text, so the
  // copy of the whole list is paid once, when (and if) a device that sees everyone is served.
  let joined = '';
  let copied = 0;
  for (const i of changed) {
    const text = textOf(i);
    // Entry i spans [starts[i], starts[i + 1] - 1) of the old text, then a comma.
    joined += list.joined.slice(copied, list.starts[i]) + text;
    copied = list.starts[i + 1] - 1;
    const delta = text.length - texts[i].length;
    texts[i] = text;
    if (delta !== 0) for (let k = i + 1; k < starts.length; k++) starts[k] += delta;
  }
  joined += list.joined.slice(copied);
  return { presence: list.presence, peers: { ids, texts }, joined, starts };
}

/** A class list's JSON array less entry `d`: two slices of the joined text, not one string per peer. */
export function joinedWithout({ joined, starts }: ClassList, d: number): string {
  const last = starts.length - 2;
  if (last === 0) return '[]';
  // Drop the entry with the comma after it, or before it for the last one.
  if (d === last) return `[${joined.slice(0, starts[d] - 1)}]`;
  return `[${joined.slice(0, starts[d])}${joined.slice(starts[d + 1])}]`;
}

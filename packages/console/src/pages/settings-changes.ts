/**
 * What a section of the network's settings sends: only the fields the person changed. The PATCH
 * merges, so a field left out keeps whatever is stored, including a change someone else made
 * after the page loaded; a field sent as it was loaded would write that change back over.
 */
import { hashKey } from '@tanstack/react-query';
import type { PatchNetworkRequest } from '@warren/contract';

type Fields = Record<string, unknown>;

/** `dns` and `derp` merge field by field too; a list or map inside them is replaced whole. */
const MERGED = new Set(['dns', 'derp']);

/**
 * The fields of `wanted` whose values differ from `loaded`, or undefined when none does. Values
 * are compared by TanStack Query's `hashKey`, which orders object keys, so a record whose keys
 * the server gave back in another order is no change; lists keep their order.
 */
export function changedFields(
  loaded: PatchNetworkRequest,
  wanted: PatchNetworkRequest,
): PatchNetworkRequest | undefined {
  const changes = changedOf(loaded as Fields, wanted as Fields, (field, before, value) =>
    MERGED.has(field) ? changedOf((before ?? {}) as Fields, value as Fields) : value,
  );
  return changes as PatchNetworkRequest | undefined;
}

function changedOf(
  loaded: Fields,
  wanted: Fields,
  inner: (field: string, before: unknown, value: unknown) => unknown = (_field, _before, value) => value,
): Fields | undefined {
  const changes: Fields = {};
  for (const [field, value] of Object.entries(wanted)) {
    if (hashKey([loaded[field]]) === hashKey([value])) continue;
    const changed = inner(field, loaded[field], value);
    if (changed !== undefined) changes[field] = changed;
  }
  return Object.keys(changes).length > 0 ? changes : undefined;
}

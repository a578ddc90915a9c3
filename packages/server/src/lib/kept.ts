/**
 * Values derived once from kept answers. On SQLite a compiled select's rows are kept, frozen,
 * until the next commit (storage/compiled-query.ts): every call until then gets the same
 * objects. Presenting those rows (dates as text, parsed lists, a state that follows the clock)
 * and serialising the result cost more than reading them did, and made the garbage the
 * collector pauses for. A derivation keyed on the rows' identity is done once per commit
 * instead, and its value marked kept, so the response serialiser (http/serializers.ts) writes
 * its text once too.
 *
 * Part of what is presented may follow the clock (a key's state turns `expired` at its
 * expiry): a derivation says until when its value holds, and is done again from then on.
 * Rows that are not kept (PostgreSQL, a transaction's handle) are derived on every call.
 */

import { innerMap } from './nested-maps.js';

const keptValues = new WeakSet<object>();

/** Whether `value` was made by a derivation and is shared, unchanged, between calls. */
export function isKept(value: unknown): value is object {
  return typeof value === 'object' && value !== null && keptValues.has(value);
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
}

/** A derived value and the time (epoch ms) from which it no longer holds; Infinity: never. */
export interface Derived<V> {
  value: V;
  until: number;
}

interface Entry<V> {
  value: V;
  from: number;
  until: number;
}

/**
 * Wraps `derive` so that for the same kept sources (each frozen, compared by identity) it runs
 * once per window of the clock it returned. Any source not frozen means not kept: derived per
 * call. A source's entry goes when the source does (weak keys).
 */
export function keptDerivation<S extends readonly object[], V extends object>(
  derive: (sources: S, now: number) => Derived<V>,
): (sources: S, now: number) => V {
  const root = new WeakMap<object, unknown>();
  return (sources, now) => {
    if (sources.length === 0 || !sources.every((source) => Object.isFrozen(source))) {
      return derive(sources, now).value;
    }
    let level = root;
    for (let i = 0; i < sources.length - 1; i++) {
      level = innerMap(level as WeakMap<object, WeakMap<object, unknown>>, sources[i]!, WeakMap);
    }
    const last = sources[sources.length - 1]!;
    const entry = level.get(last) as Entry<V> | undefined;
    if (entry && now >= entry.from && now < entry.until) return entry.value;
    const { value, until } = derive(sources, now);
    deepFreeze(value);
    keptValues.add(value);
    level.set(last, { value, from: now, until } satisfies Entry<V>);
    return value;
  };
}

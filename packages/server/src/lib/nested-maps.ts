/**
 * Caches keyed by several things in turn (a policy, then its users, then a device) are maps of
 * maps. innerMap gives the map held under a key, made and stored there the first time it is
 * asked for. It runs per device on the paths that build netmaps after a change, so when the
 * map is there it costs one lookup and allocates nothing; and it takes a WeakMap as the outer
 * map only (what every such cache is, so that the object it is keyed by can go), which keeps
 * that lookup monomorphic.
 *
 * No imports: the policy engine, which imports nothing else of the server, uses it too.
 */

/** The map under `key` in `outer`; if there is none, a new `kind` (Map or WeakMap) stored there. */
export function innerMap<K extends object, M extends object>(
  outer: WeakMap<K, M>,
  key: K,
  kind: new () => NoInfer<M>,
): M {
  let inner = outer.get(key);
  if (inner === undefined) {
    inner = new kind();
    outer.set(key, inner);
  }
  return inner;
}

import { describe, expect, it } from 'vitest';
import { innerMap } from '../../src/lib/nested-maps.js';

describe('innerMap', () => {
  it('makes the inner map of a key once, of the kind asked for, and gives that one after', () => {
    const outer = new WeakMap<object, Map<string, number>>();
    const key = {};
    const made = innerMap(outer, key, Map);
    expect(made).toBeInstanceOf(Map);
    expect(outer.get(key)).toBe(made);
    made.set('a', 1);
    expect(innerMap(outer, key, Map)).toBe(made);
    expect(innerMap(outer, key, Map).get('a')).toBe(1);
    // Another key has a map of its own.
    expect(innerMap(outer, {}, Map)).not.toBe(made);
  });

  it('nests: a WeakMap under each key, then a Map under each of its keys', () => {
    const outer = new WeakMap<object, WeakMap<object, Map<string, number>>>();
    const [a, b] = [{}, {}];
    innerMap(innerMap(outer, a, WeakMap), b, Map).set('x', 1);
    expect(innerMap(outer, a, WeakMap)).toBeInstanceOf(WeakMap);
    expect(innerMap(innerMap(outer, a, WeakMap), b, Map).get('x')).toBe(1);
    expect(innerMap(innerMap(outer, b, WeakMap), a, Map).size).toBe(0);
  });
});

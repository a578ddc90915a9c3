/**
 * The id → slot lookup a line of patched views shares (slot-index.ts): each view sees exactly
 * its own devices, whichever views were patched from it later, and two patches from one view
 * never see each other's devices.
 */
import { describe, expect, it } from 'vitest';
import { SlotIndex } from '../../src/modules/netmap/slot-index.js';

const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `d${from + i}`);

describe('slot index', () => {
  it('keeps what each earlier view of a line sees while later ones append', () => {
    const first = SlotIndex.of(ids(0, 3));
    const second = first.appended(['d3']);
    const third = second.appended(['d4', 'd5']);
    expect(third.size).toBe(6);
    expect(ids(0, 6).map((id) => third.get(id))).toEqual([0, 1, 2, 3, 4, 5]);
    expect(ids(0, 6).map((id) => second.get(id))).toEqual([0, 1, 2, 3, undefined, undefined]);
    expect(ids(0, 6).map((id) => first.has(id))).toEqual([true, true, true, false, false, false]);
    expect(first.get('unknown')).toBeUndefined();
  });

  it('gives two patches of one view their own devices', () => {
    const base = SlotIndex.of(ids(0, 2));
    const left = base.appended(['a']);
    const right = base.appended(['b', 'c']);
    const leftAgain = left.appended(['e']);
    expect([left.get('a'), left.get('b'), left.get('c')]).toEqual([2, undefined, undefined]);
    expect([right.get('a'), right.get('b'), right.get('c')]).toEqual([undefined, 2, 3]);
    expect([leftAgain.get('a'), leftAgain.get('e'), leftAgain.get('b')]).toEqual([2, 3, undefined]);
    expect([base.get('a'), base.get('b'), base.get('d1')]).toEqual([undefined, undefined, 1]);
    // Appending nothing is the same index.
    expect(right.appended([])).toBe(right);
  });
});

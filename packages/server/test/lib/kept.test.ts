import { describe, expect, it } from 'vitest';
import { isKept, keptDerivation } from '../../src/lib/kept.js';

describe('keptDerivation', () => {
  const counted = () => {
    let runs = 0;
    const derive = keptDerivation(([rows]: readonly [readonly { n: number; until: number }[]], now: number) => {
      runs++;
      return {
        value: { sum: rows.reduce((s, r) => s + r.n, 0), now },
        until: Math.min(...rows.map((r) => (r.until > now ? r.until : Number.POSITIVE_INFINITY))),
      };
    });
    return { derive, runs: () => runs };
  };

  it('derives once per frozen source and window, and marks the value kept and frozen', () => {
    const { derive, runs } = counted();
    const rows = Object.freeze([Object.freeze({ n: 1, until: 100 }), Object.freeze({ n: 2, until: 200 })]);
    const first = derive([rows], 10);
    expect(first).toEqual({ sum: 3, now: 10 });
    expect(derive([rows], 50)).toBe(first);
    expect(runs()).toBe(1);
    expect(isKept(first)).toBe(true);
    expect(Object.isFrozen(first)).toBe(true);
    // Another answer (rows read after a commit) is derived on its own.
    const other = Object.freeze([Object.freeze({ n: 5, until: 100 })]);
    expect(derive([other], 50)).toEqual({ sum: 5, now: 50 });
    expect(runs()).toBe(2);
  });

  it('derives again once the clock reaches the time the value said it holds until', () => {
    const { derive, runs } = counted();
    const rows = Object.freeze([Object.freeze({ n: 1, until: 100 })]);
    const before = derive([rows], 99);
    const after = derive([rows], 100);
    expect(after).not.toBe(before);
    expect(after).toEqual({ sum: 1, now: 100 });
    expect(derive([rows], 5_000)).toBe(after);
    // A clock read earlier than the kept value's own time is not answered from it either.
    expect(derive([rows], 98)).toEqual({ sum: 1, now: 98 });
    expect(runs()).toBe(3);
  });

  it('derives per call from rows that are not kept', () => {
    const { derive, runs } = counted();
    const rows = [{ n: 1, until: 100 }];
    const a = derive([rows], 10);
    const b = derive([rows], 10);
    expect(a).not.toBe(b);
    expect(isKept(a)).toBe(false);
    expect(runs()).toBe(2);
  });

  it('keys on every source', () => {
    const { runs } = counted();
    let calls = 0;
    const pair = keptDerivation(([a, b]: readonly [readonly number[], readonly number[]]) => {
      calls++;
      return { value: [...a, ...b], until: Number.POSITIVE_INFINITY };
    });
    const x = Object.freeze([1]);
    const y = Object.freeze([2]);
    const z = Object.freeze([3]);
    expect(pair([x, y], 0)).toEqual([1, 2]);
    expect(pair([x, z], 0)).toEqual([1, 3]);
    expect(pair([x, y], 0)).toEqual([1, 2]);
    expect(calls).toBe(2);
    expect(runs()).toBe(0);
  });
});

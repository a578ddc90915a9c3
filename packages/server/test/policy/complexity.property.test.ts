// Validation time grows no faster than the document, whatever grows in it (adversarial-shapes.ts).
// Each shape is validated at two sizes eight times apart, alternately and several times, and the
// best times compared: linear work gives a ratio near 8, the quadratic patterns this guards
// against (a de-duplication by includes(), a scan per segment, a product of two lists) gave 64
// and more. Times are the process's CPU time, compared within one run: on a busy machine the
// wall clock also counts other processes' turns, the CPU time only this one's work.

import { describe, expect, it } from 'vitest';
import { validatePolicy } from '../../src/policy/index.js';
import { SHAPES, sizeFor } from './adversarial-shapes.js';

const SMALL = 16 * 1024;
const GROWTH = 8;
/** n^1.5: between linear (8) and quadratic (64), with room for garbage collection and noise. */
const MAX_RATIO = 24;

/** CPU milliseconds `work` takes. */
function cpuTime(work: () => void): number {
  const start = process.cpuUsage();
  work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const bestTime = (text: string) => cpuTime(() => validatePolicy(text));

function growthRatio(small: string, large: string): number {
  let a = Number.POSITIVE_INFINITY;
  let b = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    a = Math.min(a, bestTime(small));
    b = Math.min(b, bestTime(large));
  }
  // Below a millisecond the clock says more about the machine than about the algorithm.
  return b / Math.max(a, 1);
}

describe('validation time grows linearly with each shape of a policy', () => {
  for (const shape of SHAPES) {
    it(shape.name, () => {
      const n = sizeFor(shape, SMALL);
      const small = shape.build(n);
      const large = shape.build(n * GROWTH);
      validatePolicy(small); // compiled and warm
      // A second try before failing: a pause of the machine can land on one measurement.
      let ratio = growthRatio(small, large);
      if (ratio >= MAX_RATIO) ratio = Math.min(ratio, growthRatio(small, large));
      expect(ratio, `${shape.name}: ${GROWTH}× the input took ${ratio.toFixed(1)}× the time`).toBeLessThan(MAX_RATIO);
    });
  }

  it('catches a quadratic shape (the check itself works)', () => {
    // The former group de-duplication: includes() over the members kept so far.
    const dedupe = (members: string[]) => {
      const kept: string[] = [];
      for (const m of members) if (!kept.includes(m)) kept.push(m);
      return kept;
    };
    const members = (n: number) => Array.from({ length: n }, (_, i) => `u${i}@example.com`);
    const time = (n: number) => {
      const list = members(n);
      return cpuTime(() => dedupe(list));
    };
    time(800);
    const ratio = Math.min(time(6_400), time(6_400)) / Math.max(Math.min(time(800), time(800)), 1);
    expect(ratio).toBeGreaterThanOrEqual(MAX_RATIO);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MinHeap } from '../../src/lib/min-heap.js';

describe('MinHeap', () => {
  it('gives back what it holds smallest first, through pushes and pops in any order', () => {
    const step = fc.oneof(fc.record({ push: fc.integer({ min: -50, max: 50 }) }), fc.constant({ pop: true as const }));
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -50, max: 50 })), fc.array(step), (start, steps) => {
        const heap = new MinHeap<{ key: number }>(
          (item) => item.key,
          start.map((key) => ({ key })),
        );
        const held = [...start];
        for (const s of steps) {
          if ('push' in s) {
            heap.push({ key: s.push });
            held.push(s.push);
          } else {
            held.sort((a, b) => a - b);
            expect(heap.pop()?.key).toBe(held.shift());
          }
          expect(heap.size).toBe(held.length);
          expect(heap.peek()?.key).toBe(held.length ? Math.min(...held) : undefined);
        }
        const drained: number[] = [];
        for (let item = heap.pop(); item; item = heap.pop()) drained.push(item.key);
        expect(drained).toEqual(held.sort((a, b) => a - b));
      }),
      { numRuns: 300 },
    );
  });
});

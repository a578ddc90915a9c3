import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OnlineSet } from '../../src/modules/netmap/online-set.js';

describe('OnlineSet', () => {
  it('answers as a plain set through any sequence of changes, across its compactions', () => {
    const universe = Array.from({ length: 120 }, (_, i) => `d${i}`);
    fc.assert(
      fc.property(
        fc.subarray(universe),
        fc.array(fc.array(fc.constantFrom(...universe), { maxLength: 10 }), { maxLength: 40 }),
        (start, rounds) => {
          let set = OnlineSet.of(start);
          const plain = new Set(start);
          const versions: [OnlineSet, string[]][] = [];
          for (const flips of rounds) {
            // Each picked device changes side: members leave, others join.
            const picked = [...new Set(flips)];
            const left = picked.filter((id) => plain.has(id));
            const joined = picked.filter((id) => !plain.has(id));
            set = set.changed(left, joined);
            for (const id of left) plain.delete(id);
            for (const id of joined) plain.add(id);
            versions.push([set, [...plain].sort()]);
            expect(set.size).toBe(plain.size);
            expect([...set].sort()).toEqual([...plain].sort());
            for (const id of universe) expect(set.has(id)).toBe(plain.has(id));
          }
          // Earlier sets are unchanged by the later ones made from them.
          for (const [version, members] of versions) expect([...version].sort()).toEqual(members);
        },
      ),
      { numRuns: 200 },
    );
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OnlineSet } from '../../src/modules/node/online-set.js';

describe('OnlineSet', () => {
  it('answers as a plain set through any sequence of removals, across its compactions', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200 }),
        fc.array(fc.array(fc.nat(), { maxLength: 12 }), { maxLength: 40 }),
        (size, rounds) => {
          const ids = Array.from({ length: size }, (_, i) => `d${i}`);
          let set = OnlineSet.of(ids);
          const plain = new Set(ids);
          const versions: [OnlineSet, string[]][] = [];
          for (const picks of rounds) {
            const members = [...plain];
            const left = [...new Set(picks.filter(() => members.length > 0).map((p) => members[p % members.length]!))];
            set = set.without(left);
            for (const id of left) plain.delete(id);
            versions.push([set, [...plain].sort()]);
            expect(set.size).toBe(plain.size);
            expect([...set].sort()).toEqual([...plain].sort());
            for (const id of ids) expect(set.has(id)).toBe(plain.has(id));
          }
          // Earlier sets are unchanged by the later ones made from them.
          for (const [version, members] of versions) expect([...version].sort()).toEqual(members);
        },
      ),
      { numRuns: 200 },
    );
  });
});

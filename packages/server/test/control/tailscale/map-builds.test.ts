/**
 * The line map streams build in: first come, first served, a few at a time, and a fan-out of
 * builds that settle without I/O (a policy change's filter alone) given out in turns of the
 * event loop, so the maps made first are sent while the later ones are made.
 */
import { describe, expect, it } from 'vitest';
import { BuildLine } from '../../../src/control/tailscale/map-builds.js';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the build line', () => {
  it('starts builds in the order they came, no more at once than its limit', async () => {
    const line = new BuildLine(3, 1000);
    const started: number[] = [];
    const release: Array<() => void> = [];
    let running = 0;
    let most = 0;
    for (let i = 0; i < 10; i++) {
      line.run(async () => {
        started.push(i);
        most = Math.max(most, ++running);
        await new Promise<void>((resolve) => release.push(resolve));
        running--;
      });
    }
    while (started.length < 10) {
      await turn();
      release.shift()?.();
    }
    expect(started).toEqual([...Array(10).keys()]);
    expect(most).toBe(3);
  });

  it('lets the event loop run between turns of builds that settle at once', async () => {
    const line = new BuildLine(8, 64);
    const done: number[] = [];
    for (let i = 0; i < 200; i++)
      line.run(async () => {
        done.push(i);
      });
    // Builds that settle in microtasks: one turn's share runs before anything else may.
    await Promise.resolve();
    const beforeTurn = done.length;
    await turn();
    const afterOneTurn = done.length;
    while (line.waiting > 0) await turn();
    await turn();
    expect(beforeTurn).toBeLessThanOrEqual(64);
    expect(afterOneTurn).toBeLessThan(200);
    expect(done).toEqual([...Array(200).keys()]);
  });
});

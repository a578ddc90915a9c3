/**
 * When a test's PostgreSQL database is dropped. Dropping one makes the server take an immediate
 * checkpoint of everything it holds: from a twentieth of a second to several seconds when other
 * databases on the server have much to write, and a test that waited for it did nothing
 * meanwhile. In a test file (the setup file `setup/settle-drops.ts` says so) a drop runs while
 * the next tests do, and the file waits for all of its drops before it ends: a failed drop still
 * fails the file, and no database outlives it. Elsewhere (a server in a process of its own) each
 * drop is waited for as before.
 */
const pending = new Set<Promise<void>>();
const failures: unknown[] = [];
let deferring = false;

/** From now on drops run in the background until `settleDrops`. */
export function deferDrops(): void {
  deferring = true;
}

/** Runs `drop` now, or starts it and returns at once when drops are deferred. */
export async function dropSoon(drop: () => Promise<void>): Promise<void> {
  if (!deferring) return drop();
  const running: Promise<void> = drop()
    .catch((error: unknown) => {
      failures.push(error);
    })
    .finally(() => pending.delete(running));
  pending.add(running);
}

/**
 * Waits for every drop started so far, and throws the first that failed. What failed is
 * forgotten then: the next file in the same worker (which shares this module) starts clean.
 */
export async function settleDrops(): Promise<void> {
  while (pending.size > 0) await Promise.all(pending);
  const failed = failures.splice(0);
  if (failed.length > 0) throw failed[0];
}

/**
 * The wait both a machine login's follow-up and a held SSH check do: read the row, and unless
 * it ended, sleep until its expiry or a signal that it may have ended (on whichever instance),
 * then read again; stop when the client goes away. A wake-up that comes while the row is being
 * read means the read may be stale, so it is made again rather than waited on.
 */
/** The longest a timer may be set for: a later expiry is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What one look found: the outcome, or how long the row may still be waited on. */
export type Look<T> = { done: T } | { expiresAt: number };

export async function waitForEnd<T>(options: {
  /** Subscribes `wake` to the signal of the row's end; returns how to unsubscribe. */
  listen: (wake: () => void) => () => void;
  /** Settles when the client goes away. */
  closed: Promise<void>;
  now: () => number;
  /** Reads the row; `gone`: the client went away (answer its outcome unless the row ended). */
  look: (gone: boolean) => Promise<Look<T>>;
}): Promise<T> {
  let woken = false;
  let resume: (() => void) | undefined;
  const wake = () => {
    woken = true;
    resume?.();
  };
  const stop = options.listen(wake);
  let gone = false;
  void options.closed.then(() => {
    gone = true;
    wake();
  });
  try {
    for (;;) {
      woken = false;
      const found = await options.look(gone);
      if ('done' in found) return found.done;
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const ms = Math.min(MAX_TIMER_MS, Math.max(1, found.expiresAt - options.now()));
        const timer = setTimeout(resolve, ms);
        resume = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      resume = undefined;
    }
  } finally {
    stop();
  }
}

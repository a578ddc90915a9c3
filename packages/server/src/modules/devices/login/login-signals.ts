/**
 * Tells a waiting client, on this instance, that its login ended: the approval wakes the
 * follow-up request at once instead of it finding out on its next look at the database. A
 * login approved through another instance is seen by the waiter's own, slower look (see
 * control/tailscale/login/).
 */
const waiting = new Map<string, Set<() => void>>();

/** Calls `wake` when the login of this token hash ends here; returns how to stop listening. */
export function onLoginEnded(tokenHash: string, wake: () => void): () => void {
  const listeners = waiting.get(tokenHash) ?? new Set();
  listeners.add(wake);
  waiting.set(tokenHash, listeners);
  return () => {
    listeners.delete(wake);
    if (listeners.size === 0 && waiting.get(tokenHash) === listeners) waiting.delete(tokenHash);
  };
}

export function loginEnded(tokenHash: string): void {
  for (const wake of waiting.get(tokenHash) ?? []) wake();
}

/**
 * Where to go back to after signing in. A login URL (`/register/…`) or a Tailscale SSH check URL
 * (`/ssh-check/…`) opened while signed out
 * shows the sign-in page; single sign-on carries the path through `returnTo`, but a one-time
 * link always lands on `/`, so the path is also remembered here for a while (the length of a
 * login URL's life) and taken once the console loads signed in.
 */
const KEY = 'warren.returnTo';
const KEPT_MS = 15 * 60_000;

export function rememberReturn(path: string): void {
  try {
    window.localStorage.setItem(KEY, JSON.stringify({ path, at: Date.now() }));
  } catch {
    // Storage may be off (private modes): the person then opens the URL again after signing in.
  }
}

/** The remembered path (only a path of this console), once; undefined when none or too old. */
export function takeReturn(): string | undefined {
  try {
    const raw = window.localStorage.getItem(KEY);
    window.localStorage.removeItem(KEY);
    if (!raw) return undefined;
    const { path, at } = JSON.parse(raw) as { path?: unknown; at?: unknown };
    if (typeof path !== 'string' || typeof at !== 'number' || Date.now() - at > KEPT_MS) return undefined;
    return /^\/(register|ssh-check)\/[A-Za-z0-9_-]+$/.test(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/** Times are epoch milliseconds inside Warren and RFC 3339 UTC strings on the wire. */
/** Whole seconds print as `2026-11-22T10:00:00Z`; sub-second times keep their milliseconds. */
export const iso = (ms: number): string => {
  // A check of the number, not a pattern over the text: this runs for every time of every body.
  const text = new Date(ms).toISOString();
  return ms % 1000 === 0 ? `${text.slice(0, -5)}Z` : text;
};
export const isoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : iso(ms));

/** The clock, injectable so tests can move time instead of sleeping. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

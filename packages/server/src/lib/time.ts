/** Times are epoch milliseconds inside Warren and RFC 3339 UTC strings on the wire. */
/** Whole seconds print as `2026-11-22T10:00:00Z`; sub-second times keep their milliseconds. */
export const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
export const isoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : iso(ms));

/** The clock, injectable so tests can move time instead of sleeping. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

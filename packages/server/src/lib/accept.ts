/**
 * How much an `Accept` header wants one media type named in full (RFC 9110 §12.5.1): the
 * highest `q` among the ranges that name it, matched without regard to case; 0 when no range
 * names it or each that does refuses it (`q=0`). Wildcards are not counted: the callers choose
 * between two types a client names explicitly and answer their default otherwise.
 */
export function acceptWeight(accept: string | undefined, type: string): number {
  let weight = 0;
  for (const range of (accept ?? '').split(',')) {
    const [name, ...parameters] = range.split(';');
    if (name?.trim().toLowerCase() !== type) continue;
    const q = parameters.map((p) => p.trim()).find((p) => p.toLowerCase().startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    if (Number.isFinite(value)) weight = Math.max(weight, Math.min(1, value));
  }
  return weight;
}

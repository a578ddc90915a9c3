// Port specs (`*`, `22`, `80,443`, `8000-8999`) and the `selector:ports` destination syntax.

/** Inclusive [lo, hi] port ranges; `*` is [[0, 65535]] so that it also covers port-less traffic. */
export type PortRanges = ReadonlyArray<readonly [number, number]>;

export const ALL_PORTS: PortRanges = Object.freeze([Object.freeze([0, 65535] as const)]);

export type PortsResult = { ok: true; ranges: PortRanges } | { ok: false; msg: string };

function portNumber(s: string): number | null {
  if (!/^[0-9]{1,5}$/.test(s)) return null;
  const n = Number(s);
  return n >= 1 && n <= 65535 ? n : null;
}

export function parsePorts(spec: string): PortsResult {
  if (spec === '*') return { ok: true, ranges: ALL_PORTS };
  if (spec === '') return { ok: false, msg: 'missing port' };
  const ranges: [number, number][] = [];
  for (const part of spec.split(',')) {
    const dash = part.indexOf('-');
    const lo = portNumber(dash < 0 ? part : part.slice(0, dash));
    const hi = dash < 0 ? lo : portNumber(part.slice(dash + 1));
    if (lo === null || hi === null) {
      return { ok: false, msg: `invalid port "${part}": ports are 1-65535, a range lo-hi, or *` };
    }
    if (lo > hi) return { ok: false, msg: `invalid port range "${part}": ${lo} is above ${hi}` };
    ranges.push([lo, hi]);
  }
  return { ok: true, ranges };
}

export function portAllowed(ranges: PortRanges, port: number): boolean {
  for (const [lo, hi] of ranges) if (port >= lo && port <= hi) return true;
  return false;
}

export type DstSplit = { ok: true; selector: string; ports: string } | { ok: false };

/**
 * Splits `selector:ports` on the last colon, so `tag:server:22` and `fd7a::1:22` both work;
 * `[fd7a::1]:22` is the unambiguous IPv6 form.
 */
export function splitDestination(entry: string): DstSplit {
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    if (close < 0 || entry[close + 1] !== ':') return { ok: false };
    return { ok: true, selector: entry.slice(1, close), ports: entry.slice(close + 2) };
  }
  const colon = entry.lastIndexOf(':');
  if (colon <= 0) return { ok: false };
  return { ok: true, selector: entry.slice(0, colon), ports: entry.slice(colon + 1) };
}

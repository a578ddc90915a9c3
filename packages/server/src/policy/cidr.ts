// IP addresses and prefixes as fixed-width hex keys: '4' + 8 hex digits for IPv4, '6' + 32 for
// IPv6. Plain string comparison then orders addresses numerically within a family (and IPv4
// before IPv6), so containment, overlap and sorted indexes need neither bigint nor a byte array.

/** An inclusive range of address keys; every prefix is one. */
export interface KeyRange {
  start: string;
  end: string;
}

export interface Prefix extends KeyRange {
  family: 4 | 6;
  bits: number;
  /** Key of the first address (the network address). */
  start: string;
  /** Key of the last address. */
  end: string;
  /** Canonical text, e.g. `10.0.0.0/24`, `fd7a:115c:a1e0::/48`. */
  text: string;
}

export type PrefixResult = { ok: true; prefix: Prefix } | { ok: false; msg: string };

const HEX = '0123456789abcdef';

function parseV4Octets(s: string): number[] | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    // Leading zeros are refused: some tools read them as octal.
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** The eight 16-bit groups of an IPv6 address (`::` compression and an IPv4 tail allowed). */
function parseV6Groups(s: string): number[] | null {
  if (s.length < 2 || s.length > 45) return null;
  const head: number[] = [];
  const tail: number[] = [];
  let cur = head;
  let compressed = false;
  let i = 0;
  if (s.charCodeAt(0) === 58) {
    if (s.charCodeAt(1) !== 58) return null;
    compressed = true;
    cur = tail;
    i = 2;
  }
  while (i < s.length) {
    let j = i;
    let v = 0;
    for (; j < s.length && j - i < 5; j++) {
      const h = hexValue(s.charCodeAt(j));
      if (h < 0) break;
      v = v * 16 + h;
    }
    if (j < s.length && s.charCodeAt(j) === 46) {
      // An IPv4 tail (`::ffff:1.2.3.4`) stands for the last two groups.
      const o = parseV4Octets(s.slice(i));
      if (!o) return null;
      cur.push((o[0] << 8) | o[1], (o[2] << 8) | o[3]);
      break;
    }
    if (j === i || j - i > 4) return null;
    cur.push(v);
    if (j === s.length) break;
    if (s.charCodeAt(j) !== 58 || j + 1 === s.length) return null;
    i = j + 1;
    if (s.charCodeAt(i) === 58) {
      if (compressed) return null;
      compressed = true;
      cur = tail;
      i++;
    }
  }
  const n = head.length + tail.length;
  if (compressed ? n > 7 : n !== 8) return null;
  for (let k = n; k < 8; k++) head.push(0);
  return head.concat(tail);
}

const HEX2 = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * IPv4 fast path (peer maps parse every device address): a character loop instead of split and
 * regular expressions. Same rules as parseV4Octets: four decimal octets, no leading zeros.
 */
function v4Key(s: string): string | null {
  let key = '4';
  let octets = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 46;
    if (c === 46) {
      if (digits === 0 || value > 255 || octets === 4) return null;
      key += HEX2[value];
      octets++;
      value = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && value === 0) return null;
      value = value * 10 + (c - 48);
      if (++digits > 3) return null;
    } else return null;
  }
  return octets === 4 ? key : null;
}

/** The key of an address, or null when `s` is not a valid IPv4 or IPv6 address. */
export function addressKey(s: string): string | null {
  if (s.includes(':')) {
    const g = parseV6Groups(s);
    if (!g) return null;
    let key = '6';
    for (const x of g) key += HEX2[x >> 8] + HEX2[x & 255];
    return key;
  }
  return v4Key(s);
}

function maskKey(key: string, bits: number, fill: '0' | 'f'): string {
  const digits = key.length - 1;
  const full = bits >> 2;
  const rem = bits & 3;
  let out = key.slice(0, 1 + full);
  if (full < digits) {
    if (rem > 0) {
      const d = HEX.indexOf(key[1 + full]);
      const mask = (0xf << (4 - rem)) & 0xf;
      out += HEX[fill === '0' ? d & mask : (d & mask) | (~mask & 0xf)];
      out += fill.repeat(digits - full - 1);
    } else {
      out += fill.repeat(digits - full);
    }
  }
  return out;
}

/** Text form of an address key: dotted IPv4, or RFC 5952 compressed IPv6. */
export function formatKey(key: string): string {
  if (key[0] === '4') {
    const o: number[] = [];
    for (let i = 1; i < 9; i += 2) o.push(Number.parseInt(key.slice(i, i + 2), 16));
    return o.join('.');
  }
  const groups: string[] = [];
  for (let i = 1; i < 33; i += 4) groups.push(Number.parseInt(key.slice(i, i + 4), 16).toString(16));
  // Compress the longest run of two or more zero groups (the first one on a tie).
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

function makePrefix(key: string, bits: number): Prefix {
  const family = key[0] === '4' ? 4 : 6;
  const start = maskKey(key, bits, '0');
  return { family, bits, start, end: maskKey(key, bits, 'f'), text: `${formatKey(start)}/${bits}` };
}

/**
 * Parses `10.0.0.0/24`, `fd7a::/48` or a bare address (a /32 or /128). Host bits set is an error
 * rather than silently masked: `10.0.0.1/24` is usually a typo for one of two different things.
 */
export function parsePrefix(s: string): PrefixResult {
  const slash = s.indexOf('/');
  const addr = slash < 0 ? s : s.slice(0, slash);
  const key = addressKey(addr);
  if (!key) return { ok: false, msg: `invalid IP address "${addr}"` };
  const max = key[0] === '4' ? 32 : 128;
  if (slash < 0) return { ok: true, prefix: makePrefix(key, max) };
  const lenText = s.slice(slash + 1);
  const bits = /^(0|[1-9][0-9]{0,2})$/.test(lenText) ? Number(lenText) : Number.NaN;
  if (!(bits >= 0 && bits <= max)) {
    return { ok: false, msg: `invalid prefix length "${lenText}" in "${s}" (IPv${key[0]} allows 0-${max})` };
  }
  const prefix = makePrefix(key, bits);
  if (prefix.start !== key) {
    return { ok: false, msg: `"${s}" is not a network address; did you mean ${prefix.text}` };
  }
  return { ok: true, prefix };
}

export function overlaps(a: KeyRange, b: KeyRange): boolean {
  return a.start <= b.end && b.start <= a.end;
}

/** True when `outer` holds every address of `inner`. */
export function containsPrefix(outer: KeyRange, inner: KeyRange): boolean {
  return outer.start <= inner.start && inner.end <= outer.end;
}

/** True for text that can only have been meant as an address or prefix (not a host alias). */
export function looksLikeAddress(s: string): boolean {
  return s.includes(':') || s.includes('/') || /^[0-9.]+$/.test(s);
}

/**
 * One IPv6 address (a /128, or an address written alone). Tailscale's recorded netmaps make no
 * peer of the device holding such an address when a rule names it (a wider IPv6 prefix holding
 * device addresses does), so it names no device by its own address; it still meets subnet
 * routes, whose routers forward to it.
 */
export function isLoneV6(p: Prefix): boolean {
  return p.family === 6 && p.bits === 128;
}

// IP protocols in rules, grants and tests: the names Tailscale accepts, or an IANA protocol
// number written as a string ("6"). Only TCP, UDP and SCTP have ports; traffic of any other
// protocol matches a destination whatever its ports (as in Tailscale's packet filter).

/** The protocol names a policy may use, with their IANA numbers. */
export const PROTO_NUMBERS: Readonly<Record<string, number>> = Object.freeze({
  icmp: 1,
  igmp: 2,
  tcp: 6,
  udp: 17,
  gre: 47,
  esp: 50,
  ah: 51,
  'ipv6-icmp': 58,
  sctp: 132,
});

export const TCP = 6;

/** Protocols with ports. */
const PORTED: ReadonlySet<number> = new Set([6, 17, 132]);

/** A protocol by name or IANA number. */
export type Protocol = keyof typeof PROTO_NUMBERS | (string & {}) | number;

/** Sorted protocol numbers a destination accepts; null: every protocol. */
export type ProtoSet = readonly number[] | null;

export type ProtoResult = { ok: true; proto: number } | { ok: false; msg: string };

const NAMES = Object.keys(PROTO_NUMBERS)
  .map((n) => `"${n}"`)
  .join(', ');

export function parseProto(text: string): ProtoResult {
  const named = Object.hasOwn(PROTO_NUMBERS, text) ? PROTO_NUMBERS[text] : undefined;
  if (named !== undefined) return { ok: true, proto: named };
  if (/^(0|[1-9][0-9]{0,2})$/.test(text) && Number(text) <= 255) return { ok: true, proto: Number(text) };
  return {
    ok: false,
    msg: `proto "${text}" is not supported (use one of ${NAMES}, or an IANA protocol number from 0 to 255 as a string)`,
  };
}

/** The number of a protocol given by name or number; -1 for an unknown name. */
export function protoNumber(p: Protocol): number {
  if (typeof p === 'number') return p;
  const r = parseProto(p);
  return r.ok ? r.proto : -1;
}

export function hasPorts(proto: number): boolean {
  return PORTED.has(proto);
}

/** Whether every protocol of the set is one without ports (ports must then be `*`). */
export function onlyPortless(set: ProtoSet): boolean {
  return set?.every((p) => !PORTED.has(p)) ?? false;
}

export function protoAllowed(set: ProtoSet, proto: number): boolean {
  return set === null || set.includes(proto);
}

/** How a test names its protocol in messages: nothing for the default (tcp). */
export function protoLabel(proto: number): string {
  if (proto === TCP) return '';
  const name = Object.keys(PROTO_NUMBERS).find((n) => PROTO_NUMBERS[n] === proto);
  return ` over ${name ?? `protocol ${proto}`}`;
}

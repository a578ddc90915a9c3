// The `grants` section, Tailscale's newer syntax: `{ src, dst, ip, app?, via? }`. A grant means
// what an `acls` rule means: each `ip` entry (`proto:ports`, ports, or `*`) opens its ports to
// every `dst` selector (which carry no ports), and the grant compiles to the same rule shape,
// so peers, tests and over-permissive checks treat both alike. `app` grants application
// capabilities: each destination device's packet filter carries them for the sources
// (tailcfg.CapGrant, see packet-filter.ts); they open no network access of their own, but make
// sources and destinations peers, as Tailscale and Headscale do. `via` (routing through chosen
// routers) is not supported and is refused.

import { getNodeValue, type Node } from 'jsonc-parser';
import { type Checker, POSTURE_FIELD, type StringItem } from './checker.js';
import { overPermissiveRule } from './over-permissive.js';
import { ALL_PORTS, type PortRanges, parsePorts, splitDestination } from './ports.js';
import { onlyPortless, type ProtoSet, parseProto } from './protocols.js';
import { destination, parsedRule } from './rule-objects.js';
import { type Definitions, parseSelector } from './selectors.js';
import type { AppCapabilities, CompiledDst, ParsedPolicy, Selector } from './types.js';
import { checkSelfSources, checkSources, OVER_PERMISSIVE_RULE } from './validate-rules.js';

const GRANT_FIELDS = ['src', 'dst', 'ip', 'app', 'via'];

interface IpEntry {
  protos: ProtoSet;
  ports: PortRanges;
}

export function checkGrants(node: Node, c: Checker, defs: Definitions, out: ParsedPolicy['rules']): void {
  if (node.type !== 'array') {
    c.error(node, '"grants" must be an array of grants');
    return;
  }
  for (const grantNode of node.children ?? []) {
    const f = c.fields(grantNode, 'a grant', GRANT_FIELDS, { srcPosture: POSTURE_FIELD });
    if (!f) continue;
    for (const field of ['src', 'dst']) {
      if (!f.has(field)) c.error(grantNode, `grant is missing "${field}"`);
    }
    const via = f.get('via');
    if (via) {
      c.error(
        via,
        '"via" is not supported: traffic reaches subnets and the internet through the routers and exit nodes the policy allows; remove "via"',
      );
    }
    const appNode = f.get('app');
    const app = appNode && checkApp(appNode, c);
    const ipNode = f.get('ip');
    if (!ipNode && !appNode) c.error(grantNode, 'grant has neither "ip" nor "app": it grants nothing');
    const srcItems = f.has('src') ? c.strings(f.get('src') as Node, '"src"') : [];
    const src = checkSources(srcItems, c, defs);
    const sels = checkGrantDestinations(f.get('dst'), c, defs);
    if (sels.some((d) => d.sel.kind === 'self')) checkSelfSources(srcItems, defs, c);
    const ips = mergeIps(ipNode ? c.strings(ipNode, '"ip"').flatMap((item) => parseIp(item, c)) : []);
    if (sels.length === 0 || (ips.length === 0 && !app)) continue;
    // Each entry shares its ip's ports: a wide grant holds (entries × selectors) references,
    // never copies of the ports or of the texts they were read from.
    const dst: CompiledDst[] = [];
    for (const ip of ips) {
      for (const d of sels) dst.push(destination(d.sel, ip.ports, ip.protos));
    }
    if (ips.length > 0) {
      const broad = overPermissiveRule(src, dst);
      // Entries are ip × dst: report at the dst selector of the first one that takes part.
      if (broad >= 0) c.error(sels[broad % sels.length].node, OVER_PERMISSIVE_RULE);
    } else {
      // `app` alone: entries for no protocol, so that the grant names its devices (for peers
      // and the packet filter's index) without opening any traffic.
      for (const d of sels) dst.push(destination(d.sel, ALL_PORTS, NO_PROTOCOL));
    }
    out.push(parsedRule(c.line(grantNode), src, dst, app || undefined));
  }
}

/** Protocols of an `app` grant's entries: none, so they open nothing. */
const NO_PROTOCOL: ProtoSet = Object.freeze([]);

/**
 * Capability names in the tailscale.com domain a policy may grant: the others are the client's
 * own (`https://tailscale.com/cap/...`) or issued by the control server, and Tailscale refuses
 * them in a policy, as Headscale does.
 */
const TAILSCALE_CAPABILITIES = new Set([
  'tailscale.com/cap/drive',
  'tailscale.com/cap/relay',
  'tailscale.com/cap/webui',
  'tailscale.com/cap/kubernetes',
  'tailscale.com/cap/tsidp',
  'tailscale.com/cap/secrets',
  // Tailscale's golink and tailsql read these from their users' capabilities; Tailscale takes
  // them in a policy (public policy files grant them), though Headscale's list has neither.
  'tailscale.com/cap/golink',
  'tailscale.com/cap/tailsql',
]);

/** `{domain}/{path}`: a domain name (with a dot), a slash, and a path; no URL scheme. */
const CAPABILITY_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+\/\S+$/i;

/**
 * A grant's `app`: an object of capability names, each with an array of JSON objects (its
 * values, which the client hands to the applications asking for the capability).
 */
function checkApp(node: Node, c: Checker): AppCapabilities | undefined {
  const props = c.object(node, '"app"');
  if (!props) return undefined;
  const out: Record<string, unknown[]> = {};
  let ok = true;
  for (const { key, keyNode, value } of props) {
    if (!CAPABILITY_NAME.test(key)) {
      c.error(keyNode, `capability "${key}" must have the form {domain}/{path}, such as "example.com/cap/foo"`);
      ok = false;
    } else if (key.toLowerCase().startsWith('tailscale.com/') && !TAILSCALE_CAPABILITIES.has(key)) {
      c.error(keyNode, `capability "${key}" is in the tailscale.com domain and cannot be granted by a policy`);
      ok = false;
    }
    if (value.type !== 'array') {
      c.error(value, `capability "${key}" must be an array of JSON objects, such as [{}]`);
      ok = false;
      continue;
    }
    for (const item of value.children ?? []) {
      if (item.type !== 'object') {
        c.error(item, `capability "${key}" must hold only JSON objects`);
        ok = false;
      }
    }
    out[key] = getNodeValue(value) as unknown[];
  }
  return ok ? out : undefined;
}

function checkGrantDestinations(
  node: Node | undefined,
  c: Checker,
  defs: Definitions,
): Array<{ sel: Selector; node: Node }> {
  const out: Array<{ sel: Selector; node: Node }> = [];
  for (const item of node ? c.strings(node, '"dst"') : []) {
    const r = parseSelector(item.value, defs);
    if (!r.ok) {
      if (carriesPort(item.value, defs)) {
        c.error(
          item.node,
          `grant destination "${item.value}" has a port: a grant's dst names devices, its ports go in "ip"`,
        );
      } else if (r.msg) c.error(item.node, r.msg);
      continue;
    }
    out.push({ sel: r.sel, node: item.node });
  }
  return out;
}

/**
 * The `ip` entries of a grant folded into at most one entry per set of ports: every entry opens
 * its ports to every `dst` selector, so a grant compiles to (entries × selectors) destinations,
 * and folding keeps a grant with thousands of each linear instead of a product. Entries for
 * every protocol stay apart from those for named protocols; named protocols that open the same
 * ports share an entry.
 */
function mergeIps(ips: IpEntry[]): IpEntry[] {
  if (ips.length < 2) return ips;
  const byProto = new Map<number | 'any', Array<readonly [number, number]>>();
  for (const ip of ips) {
    for (const proto of ip.protos ?? ['any' as const]) {
      let ranges = byProto.get(proto);
      if (!ranges) {
        ranges = [];
        byProto.set(proto, ranges);
      }
      for (const range of ip.ports) ranges.push(range);
    }
  }
  const merged: IpEntry[] = [];
  const byPorts = new Map<string, { protos: number[]; ports: PortRanges }>();
  for (const [proto, ranges] of byProto) {
    const ports = normalizePorts(ranges);
    if (proto === 'any') {
      merged.push({ protos: null, ports });
      continue;
    }
    const key = ports.map(([lo, hi]) => `${lo}-${hi}`).join(',');
    const group = byPorts.get(key);
    if (group) group.protos.push(proto);
    else byPorts.set(key, { protos: [proto], ports });
  }
  for (const group of byPorts.values()) merged.push(group);
  return merged;
}

/** Sorted, non-overlapping ranges; every port as `*` itself, so that checks by identity hold. */
function normalizePorts(ranges: ReadonlyArray<readonly [number, number]>): PortRanges {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out.length === 1 && out[0][0] === 0 && out[0][1] === 65535 ? ALL_PORTS : out;
}

/** `tag:server:22`: a valid selector followed by valid ports, written the `acls` way. */
function carriesPort(entry: string, defs: Definitions): boolean {
  const split = splitDestination(entry);
  return split.ok && parsePorts(split.ports).ok && parseSelector(split.selector, defs).ok;
}

/** One `ip` entry: `*`, ports (`443`, `80,443`, `8000-8999`), or `proto:ports` (`tcp:443`, `icmp:*`). */
function parseIp(item: StringItem, c: Checker): IpEntry[] {
  const text = item.value;
  if (text === '*') return [{ protos: null, ports: ALL_PORTS }];
  const colon = text.indexOf(':');
  let protos: ProtoSet = null;
  if (colon >= 0) {
    const p = parseProto(text.slice(0, colon));
    if (!p.ok) {
      c.error(item.node, `ip "${text}": ${p.msg}`);
      return [];
    }
    protos = [p.proto];
  }
  const ports = parsePorts(colon >= 0 ? text.slice(colon + 1) : text);
  if (!ports.ok) {
    const hint = colon < 0 && parseProto(text).ok ? `; write "${text}:*" for every port of ${text}` : '';
    c.error(item.node, `ip "${text}": ${ports.msg}${hint}`);
    return [];
  }
  if (onlyPortless(protos) && ports.ranges !== ALL_PORTS) {
    c.error(item.node, `ip "${text}": ${text.slice(0, colon)} has no ports: write "${text.slice(0, colon)}:*"`);
    return [];
  }
  return [{ protos, ports: ports.ranges }];
}

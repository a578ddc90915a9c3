// The `acls` and `autoApprovers` sections: rule shape, selectors, destinations and ports, and
// the over-permissive patterns that are refused even though they parse.

import type { Node } from 'jsonc-parser';
import type { Checker, StringItem } from './checker.js';
import { parsePrefix } from './cidr.js';
import { ALL_PORTS, type PortRanges, parsePorts, splitDestination } from './ports.js';
import { onlyPortless, PROTO_NUMBERS, type ProtoSet, parseProto } from './protocols.js';
import { type Definitions, parseSelector } from './selectors.js';
import type { CompiledDst, ParsedPolicy, Selector } from './types.js';

const RULE_FIELDS = ['action', 'src', 'dst', 'proto'];

export type DstResult = { ok: true; sel: Selector; ports: PortRanges } | { ok: false; msg: string | null };

/** Parses `selector:ports` (the dst of a rule and the targets of a test). */
export function parseDestination(entry: string, defs: Definitions): DstResult {
  let r = defs.dstMemo?.get(entry) as DstResult | undefined;
  if (!r) {
    r = parseDestinationUncached(entry, defs);
    defs.dstMemo?.set(entry, r);
  }
  return r;
}

function parseDestinationUncached(entry: string, defs: Definitions): DstResult {
  const split = splitDestination(entry);
  const ports = split.ok ? parsePorts(split.ports) : null;
  const sel = split.ok && ports?.ok ? parseSelector(split.selector, defs) : null;
  if (ports?.ok && sel?.ok) return { ok: true, sel: sel.sel, ports: ports.ranges };
  // Something is wrong; work out the most helpful message. `tag:server` splits into `tag` +
  // `server`, and `fd7a::1` into `fd7a:` + `1`: both are a selector without its port, and
  // saying so beats "invalid port" or "invalid address".
  const isAddress = !entry.startsWith('[') && parsePrefix(entry).ok;
  const shown = isAddress && entry.includes(':') ? `[${entry}]` : entry;
  const missing = `destination "${entry}" has no port: write "${shown}:*" for every port, or e.g. "${shown}:22"`;
  if (!split.ok) {
    return {
      ok: false,
      msg: entry.startsWith('[') ? `invalid destination "${entry}": use "[address]:ports"` : missing,
    };
  }
  if (ports && !ports.ok) {
    if (isAddress || ['tag', 'group', 'autogroup'].includes(split.selector)) return { ok: false, msg: missing };
    return { ok: false, msg: `destination "${entry}": ${ports.msg}` };
  }
  if (isAddress) return { ok: false, msg: missing };
  return sel && !sel.ok ? sel : { ok: false, msg: `invalid destination "${entry}"` };
}

/** Selectors that can hold user-owned devices, the only sources autogroup:self pairs. */
const USER_SOURCE_KINDS = new Set<Selector['kind']>(['all', 'user', 'group', 'member', 'admin']);

/**
 * Checks one destination against its rule's sources and protocols, reporting at the entry;
 * false when it must be left out. Shared by `acls` and grants.
 */
export function checkRuleDestination(
  item: StringItem,
  sel: Selector,
  ports: PortRanges,
  protos: ProtoSet,
  src: readonly Selector[],
  c: Checker,
): boolean {
  // As in Tailscale, any src may be used with autogroup:self: only its user-owned devices
  // match. A src that cannot hold one is a mistake worth reporting.
  if (sel.kind === 'self' && src.length > 0 && !src.some((s) => USER_SOURCE_KINDS.has(s.kind))) {
    c.error(
      item.node,
      'autogroup:self pairs user-owned devices only, but src holds only tags, IPs or hosts: add users, groups, autogroup:member or "*" to src',
    );
    return false;
  }
  if (onlyPortless(protos) && ports !== ALL_PORTS) {
    c.error(item.node, `${protoList(protos)} has no ports: write the destination with ":*"`);
    return false;
  }
  return true;
}

function protoList(protos: ProtoSet): string {
  return (protos ?? [])
    .map((p) => Object.keys(PROTO_NUMBERS).find((n) => PROTO_NUMBERS[n] === p) ?? `protocol ${p}`)
    .join(', ');
}

export function checkAcls(node: Node, c: Checker, defs: Definitions, out: ParsedPolicy['rules']): void {
  if (node.type !== 'array') {
    c.error(node, '"acls" must be an array of rules');
    return;
  }
  for (const ruleNode of node.children ?? []) {
    const f = c.fields(ruleNode, 'a rule', RULE_FIELDS);
    if (!f) continue;
    for (const field of ['action', 'src', 'dst']) {
      if (!f.has(field)) c.error(ruleNode, `rule is missing "${field}"`);
    }
    const actionNode = f.get('action');
    const action = actionNode ? c.string(actionNode, '"action"') : null;
    if (actionNode && action !== null && action !== 'accept') {
      c.error(
        actionNode,
        `action "${action}" is not supported: the only action is "accept" (what no rule accepts is denied)`,
      );
    }
    const protos = checkProto(f.get('proto'), c);
    const srcItems = f.has('src') ? c.strings(f.get('src') as Node, '"src"') : [];
    const src = checkSources(srcItems, c, defs);
    const srcHasStar = srcItems.some((s) => s.value === '*');
    const dst: CompiledDst[] = [];
    for (const item of f.has('dst') ? c.strings(f.get('dst') as Node, '"dst"') : []) {
      const r = parseDestination(item.value, defs);
      if (!r.ok) {
        if (r.msg) c.error(item.node, r.msg);
        continue;
      }
      if (!checkRuleDestination(item, r.sel, r.ports, protos, src, c)) continue;
      if (item.value === '*:*' && srcHasStar) {
        c.error(
          item.node,
          'over-permissive rule: src "*" with dst "*:*" lets every device reach every port of every other device',
        );
      }
      dst.push({ sel: r.sel, ports: r.ports, protos, text: item.value });
    }
    // A rule with another action must not count as accepting anything when tests run.
    if (action === 'accept') out.push({ line: c.line(ruleNode), src, dst });
  }
}

function checkProto(node: Node | undefined, c: Checker): ProtoSet {
  if (!node) return null;
  const proto = c.string(node, '"proto"');
  if (proto === null) return null;
  const r = parseProto(proto);
  if (!r.ok) {
    c.error(node, r.msg);
    return null;
  }
  return [r.proto];
}

/** The sources of a rule or grant; autogroup:self and autogroup:internet are dst only. */
export function checkSources(items: StringItem[], c: Checker, defs: Definitions): Selector[] {
  const out: Selector[] = [];
  for (const item of items) {
    const r = parseSelector(item.value, defs);
    if (!r.ok) {
      if (r.msg) c.error(item.node, r.msg);
    } else if (r.sel.kind === 'self' || r.sel.kind === 'internet') {
      c.error(item.node, `${item.value} can only be used in dst`);
    } else out.push(r.sel);
  }
  return out;
}

const APPROVER_KINDS = new Set<Selector['kind']>(['all', 'user', 'group', 'tag', 'member', 'admin', 'tagged']);

function checkApprovers(
  node: Node,
  what: string,
  c: Checker,
  defs: Definitions,
): { sels: Selector[]; items: StringItem[] } {
  const sels: Selector[] = [];
  const items = c.strings(node, what);
  for (const item of items) {
    const r = parseSelector(item.value, defs);
    if (!r.ok) {
      if (r.msg) c.error(item.node, r.msg);
    } else if (!APPROVER_KINDS.has(r.sel.kind)) {
      c.error(
        item.node,
        `approver "${item.value}" must be "*", a login name, group, tag or autogroup:member/admin/tagged`,
      );
    } else sels.push(r.sel);
  }
  return { sels, items };
}

export function checkAutoApprovers(
  node: Node,
  c: Checker,
  defs: Definitions,
  out: ParsedPolicy['autoApprovers'],
): void {
  const f = c.fields(node, '"autoApprovers"', ['routes', 'exitNode']);
  if (!f) return;
  const routes = f.get('routes');
  for (const { key, keyNode, value } of routes ? (c.object(routes, '"autoApprovers.routes"') ?? []) : []) {
    const r = parsePrefix(key);
    if (!r.ok) c.error(keyNode, `autoApprovers route "${key}": ${r.msg}`);
    const { sels, items } = checkApprovers(value, `autoApprovers route "${key}"`, c, defs);
    if (!r.ok) continue;
    if (r.prefix.bits === 0) {
      for (const star of items.filter((i) => i.value === '*')) {
        c.error(
          star.node,
          `over-permissive autoApprovers: "*" may not approve ${r.prefix.text} (any device could make itself an exit node)`,
        );
      }
    }
    out.routes.push({ prefix: r.prefix, approvers: sels });
  }
  const exitNode = f.get('exitNode');
  if (exitNode) {
    const { sels, items } = checkApprovers(exitNode, '"autoApprovers.exitNode"', c, defs);
    for (const star of items.filter((i) => i.value === '*')) {
      c.error(star.node, 'over-permissive autoApprovers: "*" may not approve exit nodes (0.0.0.0/0 and ::/0)');
    }
    out.exitNode.push(...sels);
  }
}

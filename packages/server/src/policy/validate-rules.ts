// The `acls` and `autoApprovers` sections: rule shape, selectors, destinations and ports, and
// the over-permissive patterns that are refused even though they parse.

import type { Node } from 'jsonc-parser';
import type { Checker, StringItem } from './checker.js';
import { parsePrefix } from './cidr.js';
import { ALL_PORTS, type PortRanges, parsePorts, splitDestination } from './ports.js';
import { type Definitions, parseSelector } from './selectors.js';
import { ALL_PROTOS, type CompiledDst, type ParsedPolicy, PROTO_BITS, type Protocol, type Selector } from './types.js';

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

function selfCompatible(src: string): boolean {
  return src === 'autogroup:member' || src.startsWith('group:') || src.includes('@');
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
    const selfBlocker = srcItems.find((s) => !selfCompatible(s.value));
    const srcHasStar = srcItems.some((s) => s.value === '*');
    const dst: CompiledDst[] = [];
    for (const item of f.has('dst') ? c.strings(f.get('dst') as Node, '"dst"') : []) {
      const r = parseDestination(item.value, defs);
      if (!r.ok) {
        if (r.msg) c.error(item.node, r.msg);
        continue;
      }
      if (r.sel.kind === 'self' && selfBlocker) {
        c.error(
          item.node,
          `autogroup:self needs a src of only users, groups and autogroup:member, but src holds "${selfBlocker.value}"`,
        );
        continue;
      }
      if (item.value === '*:*' && srcHasStar) {
        c.error(
          item.node,
          'over-permissive rule: src "*" with dst "*:*" lets every device reach every port of every other device',
        );
      }
      if (protos === PROTO_BITS.icmp && r.ports !== ALL_PORTS) {
        c.error(item.node, `icmp has no ports: write the destination with ":*"`);
      }
      dst.push({ sel: r.sel, ports: r.ports, text: item.value });
    }
    // A rule with another action must not count as accepting anything when tests run.
    if (action === 'accept') out.push({ line: c.line(ruleNode), protos, src, dst });
  }
}

function checkProto(node: Node | undefined, c: Checker): number {
  if (!node) return ALL_PROTOS;
  const proto = c.string(node, '"proto"');
  if (proto === null) return ALL_PROTOS;
  if (!Object.hasOwn(PROTO_BITS, proto)) {
    c.error(node, `proto "${proto}" is not supported (use "tcp", "udp" or "icmp")`);
    return ALL_PROTOS;
  }
  return PROTO_BITS[proto as Protocol];
}

function checkSources(items: StringItem[], c: Checker, defs: Definitions): Selector[] {
  const out: Selector[] = [];
  for (const item of items) {
    const r = parseSelector(item.value, defs);
    if (!r.ok) {
      if (r.msg) c.error(item.node, r.msg);
    } else if (r.sel.kind === 'self') {
      c.error(item.node, 'autogroup:self can only be used in dst');
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

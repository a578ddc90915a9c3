// The `acls` and `autoApprovers` sections: rule shape, selectors, destinations and ports, and
// the over-permissive patterns that are refused even though they parse.

import type { Node } from 'jsonc-parser';
import { type Checker, type KnownField, olderSpelling, POSTURE_FIELD, type StringItem } from './checker.js';
import { type Prefix, parsePrefix } from './cidr.js';
import { ALL_V4, ALL_V6, approvesEveryUser, overPermissiveRule, unionCovers } from './over-permissive.js';
import { ALL_PORTS, type PortRanges, parsePorts, splitDestination } from './ports.js';
import { onlyPortless, PROTO_NUMBERS, type ProtoSet, parseProto } from './protocols.js';
import { destination, parsedRule } from './rule-objects.js';
import { type Definitions, parseSelector } from './selectors.js';
import type { CompiledDst, ParsedPolicy, Selector } from './types.js';

const RULE_FIELDS = ['action', 'src', 'dst', 'proto'];
const RULE_KNOWN: Record<string, KnownField> = {
  users: olderSpelling('src'),
  ports: olderSpelling('dst'),
  srcPosture: POSTURE_FIELD,
};

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

export const OVER_PERMISSIVE_RULE =
  'over-permissive rule: its sources hold every device and its destinations every port of every device; narrow src, dst or ports';

/** The sources autogroup:self may follow: users and what stands for users (and `*`). */
const SELF_SOURCE_KINDS = new Set<Selector['kind']>(['all', 'user', 'group', 'member', 'admin']);

const SOURCE_KIND_NAMES: Partial<Record<Selector['kind'], string>> = {
  tag: 'a tag',
  tagged: 'autogroup:tagged',
  prefix: 'an address, a CIDR or a host alias',
};

/**
 * A rule or grant with autogroup:self in its dst: every source must be a user, a group,
 * autogroup:member or autogroup:admin (or `*`), as Tailscale refuses the policy otherwise ("can
 * only be used with users, groups, or supported autogroups"). Each other source is reported
 * where it is written.
 */
export function checkSelfSources(items: StringItem[], defs: Definitions, c: Checker): void {
  for (const item of items) {
    const r = parseSelector(item.value, defs);
    if (!r.ok || SELF_SOURCE_KINDS.has(r.sel.kind) || !(r.sel.kind in SOURCE_KIND_NAMES)) continue;
    c.error(
      item.node,
      `autogroup:self can only be used with users, groups, autogroup:member, autogroup:admin or "*" in src, and "${item.value}" is ${SOURCE_KIND_NAMES[r.sel.kind]}: move it to a rule of its own`,
    );
  }
}

/**
 * Checks one destination against its rule's protocols, reporting at the entry; false when it
 * must be left out. Shared by `acls` and grants.
 */
export function checkRuleDestination(item: StringItem, ports: PortRanges, protos: ProtoSet, c: Checker): boolean {
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
    const f = c.fields(ruleNode, 'a rule', RULE_FIELDS, RULE_KNOWN);
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
    const dst: CompiledDst[] = [];
    const dstNodes: Node[] = [];
    for (const item of f.has('dst') ? c.strings(f.get('dst') as Node, '"dst"') : []) {
      const r = parseDestination(item.value, defs);
      if (!r.ok) {
        if (r.msg) c.error(item.node, r.msg);
        continue;
      }
      if (!checkRuleDestination(item, r.ports, protos, c)) continue;
      dst.push(destination(r.sel, r.ports, protos));
      dstNodes.push(item.node);
    }
    if (dst.some((d) => d.sel.kind === 'self')) checkSelfSources(srcItems, defs, c);
    const broad = overPermissiveRule(src, dst);
    if (broad >= 0) c.error(dstNodes[broad], OVER_PERMISSIVE_RULE);
    // A rule with another action must not count as accepting anything when tests run.
    if (action === 'accept') out.push(parsedRule(c.line(ruleNode), src, dst, undefined));
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

interface Approver {
  item: StringItem;
  sel: Selector;
}

function checkApprovers(node: Node, what: string, c: Checker, defs: Definitions): Approver[] {
  const out: Approver[] = [];
  for (const item of c.strings(node, what)) {
    const r = parseSelector(item.value, defs);
    if (!r.ok) {
      if (r.msg) c.error(item.node, r.msg);
    } else if (!APPROVER_KINDS.has(r.sel.kind)) {
      c.error(
        item.node,
        `approver "${item.value}" must be "*", a login name, group, tag or autogroup:member/admin/tagged`,
      );
    } else out.push({ item, sel: r.sel });
  }
  return out;
}

export function checkAutoApprovers(
  node: Node,
  c: Checker,
  defs: Definitions,
  out: ParsedPolicy['autoApprovers'],
): void {
  const f = c.fields(node, '"autoApprovers"', ['routes', 'exitNode'], {
    services: {
      msg: '"services" is not supported: Warren has no Tailscale Services to approve; approve subnet routes with "routes" and exit nodes with "exitNode"',
    },
  });
  if (!f) return;
  // What every user-owned device, and every tagged device, could be approved for.
  const grants: Array<{ prefix: Prefix; approver: Approver }> = [];
  const routes = f.get('routes');
  for (const { key, keyNode, value } of routes ? (c.object(routes, '"autoApprovers.routes"') ?? []) : []) {
    const r = parsePrefix(key);
    if (!r.ok) c.error(keyNode, `autoApprovers route "${key}": ${r.msg}`);
    const approvers = checkApprovers(value, `autoApprovers route "${key}"`, c, defs);
    if (!r.ok) continue;
    for (const approver of approvers) grants.push({ prefix: r.prefix, approver });
    out.routes.push({ prefix: r.prefix, approvers: approvers.map((a) => a.sel) });
  }
  const exitNode = f.get('exitNode');
  if (exitNode) {
    const approvers = checkApprovers(exitNode, '"autoApprovers.exitNode"', c, defs);
    for (const approver of approvers) grants.push({ prefix: ALL_V4, approver }, { prefix: ALL_V6, approver });
    for (const a of approvers) out.exitNode.push(a.sel);
  }
  reportOverPermissiveApprovals(grants, c);
}

/**
 * Every device's owner could get a device approved for all of IPv4 or all of IPv6 (and so make
 * it an exit node) when the prefixes that approvers holding every user (`*`,
 * `autogroup:member`) may approve together cover the family: any user can enroll an untagged
 * device. Tagged devices need a tag that tagOwners controls, so `autogroup:tagged` alone is
 * not "everyone". Reported once per offending approver: the first that takes part.
 */
function reportOverPermissiveApprovals(grants: Array<{ prefix: Prefix; approver: Approver }>, c: Checker): void {
  const families = new Map<Node, string[]>();
  for (const all of [ALL_V4, ALL_V6]) {
    const mine = grants.filter((g) => g.prefix.family === all.family && approvesEveryUser(g.approver.sel));
    if (
      !unionCovers(
        mine.map((g) => g.prefix),
        all,
      )
    )
      continue;
    const first = mine.sort((a, b) => a.approver.item.node.offset - b.approver.item.node.offset)[0].approver.item.node;
    families.set(first, [...(families.get(first) ?? []), all.text]);
  }
  for (const [node, texts] of families) {
    c.error(
      node,
      `over-permissive autoApprovers: every user could get a device approved for all of ${texts.join(' and ')}, so anyone could make an exit node; approve those prefixes for specific tags or users`,
    );
  }
}

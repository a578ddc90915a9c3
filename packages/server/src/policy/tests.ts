// The policy's own `tests` section, run at validation time so that a change that breaks an
// expectation is refused before it goes live.
//
// Tests are evaluated symbolically, on the policy's selectors rather than on the devices that
// exist today: a login stands for any untagged device of that user (in the groups that list
// them), a group for each of its members' devices (or, when empty, a device of a would-be
// member), a tag for any device tagged with exactly that tag, and an IP or CIDR for traffic from
// or to those addresses. Abstract devices have no address, so IP and CIDR selectors only meet
// IP and CIDR tests. Tests know no roles, so autogroup:admin matches no test source.

import type { Node } from 'jsonc-parser';
import type { Checker } from './checker.js';
import { ALL_PORTS } from './ports.js';
import { type Definitions, parseSelector } from './selectors.js';
import { candidateRules, type MatchMode, ruleAccepts, type Subject } from './subjects.js';
import type { CompiledPolicy, CompiledRule, Protocol, Selector } from './types.js';
import { parseDestination } from './validate-rules.js';

export interface TestTarget {
  text: string;
  node: Node;
  sel: Selector;
  port: number;
}

export interface PolicyTest {
  srcText: string;
  src: Selector;
  proto: Protocol;
  accept: TestTarget[];
  deny: TestTarget[];
}

const TEST_FIELDS = ['src', 'accept', 'deny', 'proto'];
const TEST_KINDS = new Set<Selector['kind']>(['user', 'group', 'tag', 'prefix']);

export function parseTests(node: Node, c: Checker, defs: Definitions): PolicyTest[] {
  if (node.type !== 'array') {
    c.error(node, '"tests" must be an array');
    return [];
  }
  const out: PolicyTest[] = [];
  for (const testNode of node.children ?? []) {
    const f = c.fields(testNode, 'a test', TEST_FIELDS);
    if (!f) continue;
    const srcNode = f.get('src');
    if (!srcNode) c.error(testNode, 'test is missing "src"');
    const srcText = srcNode ? c.string(srcNode, 'test "src"') : null;
    let src: Selector | null = null;
    if (srcNode && srcText !== null) {
      const r = parseSelector(srcText, defs);
      if (!r.ok) {
        if (r.msg) c.error(srcNode, r.msg);
      } else if (!TEST_KINDS.has(r.sel.kind)) {
        c.error(srcNode, `test src "${srcText}" must be a login name, group, tag, host or IP`);
      } else src = r.sel;
    }
    let proto: Protocol = 'tcp';
    const protoNode = f.get('proto');
    const protoText = protoNode ? c.string(protoNode, 'test "proto"') : null;
    if (protoNode && protoText !== null) {
      if (protoText === 'tcp' || protoText === 'udp' || protoText === 'icmp') proto = protoText;
      else c.error(protoNode, `proto "${protoText}" is not supported (use "tcp", "udp" or "icmp")`);
    }
    const accept = parseTargets(f.get('accept'), '"accept"', c, defs);
    const deny = parseTargets(f.get('deny'), '"deny"', c, defs);
    if (src && srcText !== null) out.push({ srcText, src, proto, accept, deny });
  }
  return out;
}

function parseTargets(node: Node | undefined, what: string, c: Checker, defs: Definitions): TestTarget[] {
  const out: TestTarget[] = [];
  for (const item of node ? c.strings(node, what) : []) {
    const r = parseDestination(item.value, defs);
    if (!r.ok) {
      if (r.msg) c.error(item.node, r.msg);
    } else if (!TEST_KINDS.has(r.sel.kind)) {
      c.error(item.node, `test destination "${item.value}" must be a login name, group, tag, host or IP with a port`);
    } else if (r.ports === ALL_PORTS || r.ports.length !== 1 || r.ports[0][0] !== r.ports[0][1]) {
      c.error(item.node, `test destination "${item.value}" needs a single port, e.g. ":22"`);
    } else out.push({ text: item.value, node: item.node, sel: r.sel, port: r.ports[0][0] });
  }
  return out;
}

interface Labeled {
  label: string;
  subject: Subject;
}

const NONE: ReadonlySet<string> = new Set();

function userSubject(policy: CompiledPolicy, login: string): Subject {
  const keys = [`u:${login}`, 'a:member', ...(policy.userGroups.get(login) ?? []).map((g) => `g:${g}`)];
  return { keys: new Set(keys), owner: login, ranges: [] };
}

/** The abstract devices a test selector stands for (see the header comment). */
function testSubjects(policy: CompiledPolicy, sel: Selector): Labeled[] {
  switch (sel.kind) {
    case 'user':
      return [{ label: sel.login, subject: userSubject(policy, sel.login) }];
    case 'group': {
      const members = policy.groups.get(sel.name) ?? [];
      if (members.length === 0) {
        const subject = { keys: new Set(['a:member', sel.key]), owner: `${sel.name}#member`, ranges: [] };
        return [{ label: `a member of ${sel.name}`, subject }];
      }
      return members.map((login) => ({ label: login, subject: userSubject(policy, login) }));
    }
    case 'tag':
      return [{ label: sel.tag, subject: { keys: new Set([sel.key, 'a:tagged']), owner: null, ranges: [] } }];
    case 'prefix':
      return [{ label: sel.prefix.text, subject: { keys: NONE, owner: null, ranges: [sel.prefix] } }];
    default:
      return [];
  }
}

function acceptingRule(
  policy: CompiledPolicy,
  candidates: number[],
  src: Subject,
  dst: Subject,
  port: number,
  proto: Protocol,
  mode: MatchMode,
): CompiledRule | undefined {
  for (const i of candidates) {
    if (ruleAccepts(policy.rules[i], src, dst, port, proto, mode)) return policy.rules[i];
  }
  return undefined;
}

export function runTests(policy: CompiledPolicy, tests: PolicyTest[], c: Checker): void {
  for (const t of tests) {
    const srcs = testSubjects(policy, t.src).map((s) => ({ ...s, candidates: candidateRules(policy, s.subject) }));
    const check = (target: TestTarget, expectAccept: boolean) => {
      const dsts = testSubjects(policy, target.sel);
      for (const s of srcs) {
        for (const d of dsts) {
          // "accept" must hold for all the traffic the test names, "deny" for any of it.
          const mode = expectAccept ? 'cover' : 'overlap';
          const rule = acceptingRule(policy, s.candidates, s.subject, d.subject, target.port, t.proto, mode);
          if (expectAccept === (rule !== undefined)) continue;
          const who = [s.label !== t.srcText && `from ${s.label}`, dsts.length > 1 && `to ${d.label}`].filter(Boolean);
          const detail = who.length > 0 ? ` (${who.join(', ')})` : '';
          const proto = t.proto === 'tcp' ? '' : ` over ${t.proto}`;
          const head = `test: ${t.srcText} -> ${target.text}${proto} expected`;
          c.error(
            target.node,
            expectAccept
              ? `${head} accept, but no rule accepts it${detail}`
              : `${head} deny, but the rule at line ${rule?.line} accepts it${detail}`,
          );
          return;
        }
      }
    };
    for (const target of t.accept) check(target, true);
    for (const target of t.deny) check(target, false);
  }
}

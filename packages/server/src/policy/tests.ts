// The policy's own `tests` section, run at validation time so that a change that breaks an
// expectation is refused before it goes live.
//
// Tests are evaluated symbolically, on the policy's selectors rather than on the devices that
// exist today: a login stands for any untagged device of that user (in the groups that list
// them), a group for each of its members' devices (or, when empty, a device of a would-be
// member), a tag for any device tagged with exactly that tag, and an IP or CIDR for traffic from
// or to those addresses. Abstract devices have no address, so IP and CIDR selectors only meet
// IP and CIDR tests. Tests know no roles, so autogroup:admin matches no login or group as a test
// source; as a source itself it is an admin's device in no group. autogroup:member stands for
// every login the policy names and one it does not, autogroup:tagged for every tag of tagOwners
// and a tag the policy does not name. An `accept` target is one host and one port, as Tailscale
// checks it: Tailscale fails an accept of a port list, a range or `*`, and of a CIDR (or a host
// alias of one), so Warren reports them as failures. A `deny` target takes any port form and
// any prefix, and every listed port of all of it must be denied. A test with neither checks
// nothing and is refused.

import type { Node } from 'jsonc-parser';
import type { Checker } from './checker.js';
import type { Prefix } from './cidr.js';
import { type PortRanges, splitDestination } from './ports.js';
import { parseProto, protoLabel, TCP } from './protocols.js';
import { type Definitions, parseSelector } from './selectors.js';
import { candidateRules, type MatchMode, rulePorts, type Subject } from './subjects.js';
import type { CompiledPolicy, CompiledRule, PolicyError, Selector } from './types.js';
import { parseDestination } from './validate-rules.js';

export interface TestTarget {
  text: string;
  node: Node;
  sel: Selector;
  /** One port for an accept; for a deny, every listed port must be denied (`*` is 1-65535). */
  ports: PortRanges;
}

/**
 * What became of one entry of the policy's `tests`: the line it starts on, its `src` as written
 * ("" when missing or not a string), and every problem found in it — a malformed part, or an
 * expectation the rules break (the same problems `errors` lists, at the same places).
 */
export interface PolicyTestResult {
  line: number;
  src: string;
  passed: boolean;
  failures: PolicyError[];
}

export interface PolicyTest {
  result: PolicyTestResult;
  srcText: string;
  src: Selector;
  /** IANA protocol number; tcp unless the test says otherwise. */
  proto: number;
  accept: TestTarget[];
  deny: TestTarget[];
}

const TEST_FIELDS = ['src', 'accept', 'deny', 'proto'];
const TEST_KINDS = new Set<Selector['kind']>(['user', 'group', 'tag', 'prefix']);
const SRC_KINDS = new Set<Selector['kind']>([...TEST_KINDS, 'member', 'tagged', 'admin']);

/** Every entry with its result; the entries that parsed are returned to be run. */
export function parseTests(node: Node, c: Checker, defs: Definitions, results: PolicyTestResult[]): PolicyTest[] {
  if (node.type !== 'array') {
    c.error(node, '"tests" must be an array');
    return [];
  }
  const out: PolicyTest[] = [];
  for (const testNode of node.children ?? []) {
    const before = c.errors.length;
    const result: PolicyTestResult = { line: c.line(testNode), src: '', passed: true, failures: [] };
    results.push(result);
    const test = parseTest(testNode, c, defs, result);
    result.failures.push(...c.errors.slice(before));
    result.passed = result.failures.length === 0;
    if (test) out.push(test);
  }
  return out;
}

function parseTest(testNode: Node, c: Checker, defs: Definitions, result: PolicyTestResult): PolicyTest | null {
  const f = c.fields(testNode, 'a test', TEST_FIELDS);
  if (!f) return null;
  const srcNode = f.get('src');
  if (!srcNode) c.error(testNode, 'test is missing "src"');
  const srcText = srcNode ? c.string(srcNode, 'test "src"') : null;
  result.src = srcText ?? '';
  let src: Selector | null = null;
  if (srcNode && srcText !== null) {
    const r = parseSelector(srcText, defs);
    if (!r.ok) {
      if (r.msg) c.error(srcNode, r.msg);
    } else if (!SRC_KINDS.has(r.sel.kind)) {
      c.error(srcNode, `test src "${srcText}" must be a login name, group, tag, autogroup, host or IP`);
    } else src = r.sel;
  }
  let proto = TCP;
  const protoNode = f.get('proto');
  const protoText = protoNode ? c.string(protoNode, 'test "proto"') : null;
  if (protoNode && protoText !== null) {
    const r = parseProto(protoText);
    if (r.ok) proto = r.proto;
    else c.error(protoNode, r.msg);
  }
  if (!f.has('accept') && !f.has('deny')) c.error(testNode, 'test has neither "accept" nor "deny": it checks nothing');
  const accept = parseTargets(f.get('accept'), true, c, defs);
  const deny = parseTargets(f.get('deny'), false, c, defs);
  return src && srcText !== null ? { result, srcText, src, proto, accept, deny } : null;
}

function parseTargets(node: Node | undefined, accept: boolean, c: Checker, defs: Definitions): TestTarget[] {
  const out: TestTarget[] = [];
  for (const item of node ? c.strings(node, accept ? '"accept"' : '"deny"') : []) {
    const r = parseDestination(item.value, defs);
    if (!r.ok) {
      if (r.msg) c.error(item.node, r.msg);
    } else if (!TEST_KINDS.has(r.sel.kind)) {
      c.error(item.node, `test destination "${item.value}" must be a login name, group, tag, host or IP with a port`);
    } else if (accept && !(r.ports.length === 1 && r.ports[0][0] === r.ports[0][1])) {
      c.error(
        item.node,
        `test accept "${item.value}" names several ports: an accept checks one port, and Tailscale fails a list, a range or "*"; write one target per port`,
      );
    } else if (accept && r.sel.kind === 'prefix' && (isRange(r.sel.prefix) || writtenAsCidr(item.value))) {
      c.error(
        item.node,
        `test accept "${item.value}" names a range of addresses: an accept checks one host (a login, group, tag, IP or host alias of one address), and Tailscale fails a CIDR`,
      );
    } else {
      // Port 0 is not a port traffic uses: a deny of `*` asks for every real one.
      const ports = accept ? r.ports : r.ports.map(([lo, hi]) => [Math.max(lo, 1), hi] as const);
      out.push({ text: item.value, node: item.node, sel: r.sel, ports });
    }
  }
  return out;
}

interface Labeled {
  label: string;
  subject: Subject;
}

const NONE: ReadonlySet<string> = new Set();

/** More than one address. */
const isRange = (p: Prefix) => p.bits < (p.family === 4 ? 32 : 128);

/** `10.0.0.5/32:22`: one address, but written as a prefix (which Tailscale fails in an accept). */
function writtenAsCidr(target: string): boolean {
  const split = splitDestination(target);
  return split.ok && split.selector.includes('/');
}

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
    // An autogroup stands for every device it holds now or could: each identity the policy
    // names, and one it does not.
    case 'member':
    case 'admin': {
      const logins = new Set([...policy.userGroups.keys(), ...policy.index.userKeys.keys()]);
      const extra = sel.kind === 'admin' ? ['a:admin'] : [];
      const anyone = { keys: new Set(['a:member', ...extra]), owner: `${sel.kind}#user`, ranges: [] };
      if (sel.kind === 'admin') return [{ label: 'an admin', subject: anyone }];
      return [
        ...[...logins].map((login) => ({ label: login, subject: userSubject(policy, login) })),
        { label: 'a user no rule names', subject: anyone },
      ];
    }
    case 'tagged':
      return [
        ...[...policy.tagOwners.keys()].map((tag) => ({
          label: tag,
          subject: { keys: new Set([`t:${tag}`, 'a:tagged']), owner: null, ranges: [] },
        })),
        {
          label: 'a device with a tag no rule names',
          subject: { keys: new Set(['a:tagged']), owner: null, ranges: [] },
        },
      ];
    default:
      return [];
  }
}

/** Whether `ranges` together hold every port of `want`. */
function coversPorts(ranges: readonly PortRanges[], want: PortRanges): boolean {
  const all = ranges.flat().sort((a, b) => a[0] - b[0]);
  return want.every(([lo, hi]) => {
    let next = lo;
    for (const [a, b] of all) {
      if (a > next) break;
      if (b >= next) next = b + 1;
      if (next > hi) return true;
    }
    return next > hi;
  });
}

function touchesPorts(ranges: readonly PortRanges[], want: PortRanges): boolean {
  return ranges.some((r) => r.some(([a, b]) => want.some(([lo, hi]) => a <= hi && lo <= b)));
}

/**
 * `accept`: the rules together open every port of the target (mode `cover`: for all the traffic
 * the test names), returning undefined when they do; `deny`: the first rule that opens any of
 * them, or undefined. The returned rule explains a failed expectation.
 */
function verdict(
  policy: CompiledPolicy,
  candidates: number[],
  src: Subject,
  dst: Subject,
  ports: PortRanges,
  proto: number,
  expectAccept: boolean,
): { ok: boolean; rule?: CompiledRule } {
  const mode: MatchMode = expectAccept ? 'cover' : 'overlap';
  const open: PortRanges[] = [];
  for (const i of candidates) {
    const rule = policy.rules[i];
    const found = rulePorts(rule, src, dst, proto, mode);
    if (!expectAccept && touchesPorts(found, ports)) return { ok: false, rule };
    open.push(...found);
  }
  return { ok: !expectAccept || coversPorts(open, ports) };
}

const single = (ports: PortRanges) => ports.length === 1 && ports[0][0] === ports[0][1];

/** Runs each test, adding what it finds to the checker's errors and to the test's result. */
export function runTests(policy: CompiledPolicy, tests: PolicyTest[], c: Checker): void {
  for (const t of tests) {
    const before = c.errors.length;
    runTest(policy, t, c);
    t.result.failures.push(...c.errors.slice(before));
    t.result.passed = t.result.failures.length === 0;
  }
}

function runTest(policy: CompiledPolicy, t: PolicyTest, c: Checker): void {
  const srcs = testSubjects(policy, t.src).map((s) => ({ ...s, candidates: candidateRules(policy, s.subject) }));
  const check = (target: TestTarget, expectAccept: boolean) => {
    const dsts = testSubjects(policy, target.sel);
    for (const s of srcs) {
      for (const d of dsts) {
        // "accept" must hold for all the traffic the test names, "deny" for any of it.
        const v = verdict(policy, s.candidates, s.subject, d.subject, target.ports, t.proto, expectAccept);
        if (v.ok) continue;
        const who = [s.label !== t.srcText && `from ${s.label}`, dsts.length > 1 && `to ${d.label}`].filter(Boolean);
        const detail = who.length > 0 ? ` (${who.join(', ')})` : '';
        const head = `test: ${t.srcText} -> ${target.text}${protoLabel(t.proto)} expected`;
        c.error(
          target.node,
          expectAccept
            ? `${head} accept, but no rule accepts ${single(target.ports) ? 'it' : 'every port of it'}${detail}`
            : `${head} deny, but the rule at line ${v.rule?.line} accepts it${detail}`,
        );
        return;
      }
    }
  };
  for (const target of t.accept) check(target, true);
  for (const target of t.deny) check(target, false);
}

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
// and a tag the policy does not name. Targets take any port form (the contract's rule, where
// Tailscale fails an accept of several ports): an `accept` needs every listed port accepted, a
// `deny` every one denied. An `accept` target is one host, as Tailscale checks it: an accept of
// a CIDR (or a host alias of one) fails; a `deny` target may name any prefix. A test with
// neither checks nothing and is refused.

import type { Node } from 'jsonc-parser';
import { type Checker, olderSpelling, POSTURE_UNSUPPORTED } from './checker.js';
import { overlaps, type Prefix, parsePrefix } from './cidr.js';
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
  /** Every listed port must be accepted (or denied); `*` stands for 1-65535. */
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
    for (let i = before; i < c.errors.length; i++) result.failures.push(c.errors[i]);
    result.passed = result.failures.length === 0;
    if (test) out.push(test);
  }
  return out;
}

function parseTest(testNode: Node, c: Checker, defs: Definitions, result: PolicyTestResult): PolicyTest | null {
  const f = c.fields(testNode, 'a test', TEST_FIELDS, {
    user: olderSpelling('src'),
    allow: olderSpelling('accept'),
    srcPostureAttrs: { msg: `"srcPostureAttrs": ${POSTURE_UNSUPPORTED}; remove it` },
  });
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
    } else if (accept && r.sel.kind === 'prefix' && (isRange(r.sel.prefix) || writtenAsCidr(item.value))) {
      c.error(
        item.node,
        `test accept "${item.value}" names a range of addresses: an accept checks one host (a login, group, tag, IP or host alias of one address), and Tailscale fails a CIDR`,
      );
    } else {
      // Port 0 is not a port traffic uses: `*` asks for every real one.
      const ports = r.ports.map(([lo, hi]) => [Math.max(lo, 1), hi] as const);
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

/**
 * What autogroup:internet leaves out, as Tailscale defines it (every public address): the
 * network's own ranges, private, shared, loopback, link-local and multicast ones.
 */
const NOT_INTERNET = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '224.0.0.0/3',
  '::/127',
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
].map((text) => (parsePrefix(text) as { ok: true; prefix: Prefix }).prefix);

/**
 * A test target given as an address or prefix; one wholly on the internet is held by
 * autogroup:internet, as Tailscale's tests read a rule to it ("accept": ["1.1.1.1:53"]).
 */
function prefixSubject(prefix: Prefix): Subject {
  const internet = !NOT_INTERNET.some((range) => overlaps(range, prefix));
  return internet
    ? { keys: NONE, owner: null, ranges: [prefix], internet }
    : { keys: NONE, owner: null, ranges: [prefix] };
}

/** More than one address. */
const isRange = (p: Prefix) => p.bits < (p.family === 4 ? 32 : 128);

/** `10.0.0.5/32:22`: one address, but written as a prefix (which Tailscale fails in an accept). */
function writtenAsCidr(target: string): boolean {
  const split = splitDestination(target);
  return split.ok && split.selector.includes('/');
}

export function userSubject(policy: CompiledPolicy, login: string): Subject {
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
      return [{ label: sel.prefix.text, subject: prefixSubject(sel.prefix) }];
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

/**
 * Abstract devices the rules cannot tell apart, represented by their first: the rules see only
 * the principal keys some rule names (and a prefix subject's ranges), so a group of 60,000
 * members nobody names one by one is a single class, and a test between two such groups costs
 * one verdict rather than 3.6 billion. Owners are kept per member for autogroup:self.
 */
interface SubjectClass {
  first: Labeled;
  members: Labeled[];
  /** The source side's candidate rules (computed for the first; every member shares them). */
  candidates?: number[];
}

interface Classes {
  list: SubjectClass[];
  /** How many abstract devices the selector stands for (labels name one only when several). */
  size: number;
  /** Owner → the members with that owner, for pairs autogroup:self may hold. */
  byOwner: Map<string, Array<{ cls: SubjectClass; member: Labeled }>>;
}

function subjectClasses(policy: CompiledPolicy, subjects: Labeled[]): Classes {
  const { keySrcRules, keyDstRules } = policy.index;
  const bySignature = new Map<string, SubjectClass>();
  const list: SubjectClass[] = [];
  const byOwner: Classes['byOwner'] = new Map();
  for (const s of subjects) {
    const named = [...s.subject.keys].filter((k) => keySrcRules.has(k) || keyDstRules.has(k)).sort();
    const ranges = s.subject.ranges.map((r) => `${r.start}-${r.end}`).join(',');
    const signature = `${named.join(' ')}|${ranges}`;
    let cls = bySignature.get(signature);
    if (!cls) {
      cls = { first: s, members: [] };
      bySignature.set(signature, cls);
      list.push(cls);
    }
    cls.members.push(s);
    if (s.subject.owner !== null) {
      const same = byOwner.get(s.subject.owner);
      if (same) same.push({ cls, member: s });
      else byOwner.set(s.subject.owner, [{ cls, member: s }]);
    }
  }
  return { list, size: subjects.length, byOwner };
}

const sameOwner = (a: Subject, b: Subject) => a.owner !== null && a.owner === b.owner;

/** A member of each class whose owners differ (autogroup:self holds for neither), if any. */
function differentOwners(src: SubjectClass, dst: SubjectClass): [Labeled, Labeled] | null {
  const s = src.first;
  const d = dst.members.find((m) => !sameOwner(s.subject, m.subject));
  if (d) return [s, d];
  const other = src.members.find((m) => !sameOwner(m.subject, dst.first.subject));
  return other ? [other, dst.first] : null;
}

/** Runs each test, adding what it finds to the checker's errors and to the test's result. */
export function runTests(policy: CompiledPolicy, tests: PolicyTest[], c: Checker): void {
  const run: TestRun = {
    policy,
    self: policy.rules.some((r) => r.dstSelf),
    classes: new Map(),
    outcomes: new Map(),
  };
  for (const t of tests) {
    const before = c.errors.length;
    runTest(run, t, c);
    for (let i = before; i < c.errors.length; i++) t.result.failures.push(c.errors[i]);
    t.result.passed = t.result.failures.length === 0;
  }
}

interface TestRun {
  policy: CompiledPolicy;
  /** Whether some rule has autogroup:self, the one place where owners matter. */
  self: boolean;
  /** Classes per selector (selectors are shared objects: one per distinct text). */
  classes: Map<Selector, Classes>;
  /** The message (null: passed) of each distinct expectation already judged. */
  outcomes: Map<string, string | null>;
}

function classesOf(run: TestRun, sel: Selector): Classes {
  let classes = run.classes.get(sel);
  if (!classes) {
    classes = subjectClasses(run.policy, testSubjects(run.policy, sel));
    run.classes.set(sel, classes);
  }
  return classes;
}

function runTest(run: TestRun, t: PolicyTest, c: Checker): void {
  const { policy } = run;
  const srcs = classesOf(run, t.src);
  const judge = (target: TestTarget, expectAccept: boolean): string | null => {
    const dsts = classesOf(run, target.sel);
    const fails = (s: Labeled, d: Labeled, cls: SubjectClass): string | null => {
      // "accept" must hold for all the traffic the test names, "deny" for any of it.
      cls.candidates ??= candidateRules(policy, cls.first.subject);
      const v = verdict(policy, cls.candidates, s.subject, d.subject, target.ports, t.proto, expectAccept);
      if (v.ok) return null;
      const who = [s.label !== t.srcText && `from ${s.label}`, dsts.size > 1 && `to ${d.label}`].filter(Boolean);
      const detail = who.length > 0 ? ` (${who.join(', ')})` : '';
      const head = `test: ${t.srcText} -> ${target.text}${protoLabel(t.proto)} expected`;
      return expectAccept
        ? `${head} accept, but no rule accepts ${single(target.ports) ? 'it' : 'every port of it'}${detail}${roleHint(s, d)}`
        : `${head} deny, but the rule at line ${v.rule?.line} accepts it${detail}`;
    };
    // Tailscale runs tests with its users' roles, so a file whose owner's login is tested against
    // rules for autogroup:admin passes there: say why it fails here, and what to write instead.
    const roleHint = (s: Labeled, d: Labeled): string => {
      if (t.src.kind !== 'user' || s.subject.keys.has('a:admin')) return '';
      const admin = { ...s.subject, keys: new Set([...s.subject.keys, 'a:admin']) };
      const v = verdict(policy, candidateRules(policy, admin), admin, d.subject, target.ports, t.proto, true);
      if (!v.ok) return '';
      return `; tests know no roles, so rules for autogroup:admin do not count for ${t.srcText}: to test an admin, write "src": "autogroup:admin"`;
    };
    for (const s of srcs.list) {
      for (const d of dsts.list) {
        const pair = run.self ? differentOwners(s, d) : [s.first, d.first];
        const msg = pair ? fails(pair[0], pair[1], s) : null;
        if (msg) return msg;
      }
    }
    // With autogroup:self, a device and another of the same owner: one verdict per such pair.
    if (!run.self) return null;
    for (const s of srcs.list) {
      for (const m of s.members) {
        if (m.subject.owner === null) continue;
        for (const d of dsts.byOwner.get(m.subject.owner) ?? []) {
          const msg = fails(m, d.member, s);
          if (msg) return msg;
        }
      }
    }
    return null;
  };
  const check = (target: TestTarget, expectAccept: boolean) => {
    // Policies repeat tests: an expectation already judged is not judged again.
    const key = `${t.srcText}\u0000${t.proto}\u0000${expectAccept}\u0000${target.text}`;
    let msg = run.outcomes.get(key);
    if (msg === undefined) {
      msg = judge(target, expectAccept);
      run.outcomes.set(key, msg);
    }
    if (msg) c.error(target.node, msg);
  };
  for (const target of t.accept) check(target, true);
  for (const target of t.deny) check(target, false);
}

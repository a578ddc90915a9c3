// The policy's `sshTests` section (Tailscale's syntax): from a source, to each destination, the
// local users that must be accepted, asked to check, or denied by the `ssh` rules. Run at
// validation, as `tests` are, so a change that breaks one is refused with the failure at the
// user it names.
//
// Symbolic, as tests.ts: a login stands for an untagged device of that user (in the groups that
// list it), a tag for a device tagged exactly so. Each pair takes the first rule that holds the
// source, holds the destination and maps the user, as the client evaluates its SSHPolicy.

import type { Node } from 'jsonc-parser';
import type { Checker, StringItem } from './checker.js';
import { type Definitions, parseSelector } from './selectors.js';
import { matchesSelector, type Subject } from './subjects.js';
import { userSubject } from './tests.js';
import type { CompiledPolicy, Selector, SshRule } from './types.js';

const FIELDS = ['src', 'dst', 'accept', 'check', 'deny'];
const KINDS = new Set<Selector['kind']>(['user', 'tag']);
type Outcome = 'accept' | 'check' | 'deny';

interface Endpoint {
  text: string;
  sel: Selector;
}

export interface SshTest {
  src: Endpoint;
  dst: Endpoint[];
  expect: Array<{ item: StringItem; outcome: Outcome }>;
}

export function parseSshTests(node: Node, c: Checker, defs: Definitions): SshTest[] {
  if (node.type !== 'array') {
    c.error(node, '"sshTests" must be an array');
    return [];
  }
  const out: SshTest[] = [];
  for (const testNode of node.children ?? []) {
    const f = c.fields(testNode, 'an ssh test', FIELDS);
    if (!f) continue;
    if (!f.has('src')) c.error(testNode, 'ssh test is missing "src"');
    if (!f.has('dst')) c.error(testNode, 'ssh test is missing "dst"');
    if (!f.has('accept') && !f.has('check') && !f.has('deny')) {
      c.error(testNode, 'ssh test has none of "accept", "check" and "deny": it checks nothing');
    }
    const srcNode = f.get('src');
    const srcText = srcNode ? c.string(srcNode, 'ssh test "src"') : null;
    const src = srcNode && srcText !== null ? endpoint({ value: srcText, node: srcNode }, 'src', c, defs) : null;
    const dst: Endpoint[] = [];
    for (const item of f.has('dst') ? c.strings(f.get('dst') as Node, 'ssh test "dst"') : []) {
      const e = endpoint(item, 'dst', c, defs);
      if (e) dst.push(e);
    }
    const expect: SshTest['expect'] = [];
    for (const outcome of ['accept', 'check', 'deny'] as const) {
      const list = f.get(outcome);
      for (const item of list ? c.strings(list, `ssh test "${outcome}"`) : []) expect.push({ item, outcome });
    }
    if (src) out.push({ src, dst, expect });
  }
  return out;
}

function endpoint(item: StringItem, side: string, c: Checker, defs: Definitions): Endpoint | null {
  const r = parseSelector(item.value, defs);
  if (!r.ok) {
    if (r.msg) c.error(item.node, r.msg);
    return null;
  }
  if (!KINDS.has(r.sel.kind)) {
    c.error(item.node, `ssh test ${side} "${item.value}" must be a login name or a tag`);
    return null;
  }
  return { text: item.value, sel: r.sel };
}

function subjectOf(policy: CompiledPolicy, sel: Selector): Subject {
  if (sel.kind === 'user') return userSubject(policy, sel.login);
  const key = sel.kind === 'tag' ? sel.key : '';
  return { keys: new Set([key, 'a:tagged']), owner: null, ranges: [] };
}

/** Whether the rule lets `src` log in to `dst` as `user` (the action aside). */
function ruleLetsIn(rule: SshRule, src: Subject, dst: Subject, user: string): boolean {
  if (!rule.src.some((sel) => matchesSelector(sel, src, 'overlap'))) return false;
  const holds = rule.dst.some((sel) =>
    sel.kind === 'self' ? src.owner !== null && src.owner === dst.owner : matchesSelector(sel, dst, 'overlap'),
  );
  if (!holds) return false;
  const { users } = rule;
  if (user === 'root') return users.root;
  if (users.nonroot || users.named.includes(user)) return true;
  const at = src.owner?.lastIndexOf('@') ?? -1;
  return (
    src.owner !== null &&
    at > 0 &&
    src.owner.slice(0, at) === user &&
    users.localparts.includes(src.owner.slice(at + 1).toLowerCase())
  );
}

/** Runs each test, reporting a broken expectation at the user it names. */
export function runSshTests(policy: CompiledPolicy, tests: SshTest[], c: Checker): void {
  // The client's order: rules that ask before those that accept.
  const ordered = [
    ...policy.ssh.filter((r) => r.action === 'check'),
    ...policy.ssh.filter((r) => r.action !== 'check'),
  ];
  for (const t of tests) {
    const src = subjectOf(policy, t.src.sel);
    for (const d of t.dst) {
      const dst = subjectOf(policy, d.sel);
      for (const { item, outcome } of t.expect) {
        const rule = ordered.find((r) => ruleLetsIn(r, src, dst, item.value));
        const got: Outcome = rule ? rule.action : 'deny';
        if (got === outcome) continue;
        const head = `sshTest: ${t.src.text} -> ${d.text} as "${item.value}" expected ${outcome}`;
        c.error(
          item.node,
          rule
            ? `${head}, but the ssh rule at line ${rule.line} ${got}s it`
            : `${head}, but no ssh rule lets it in${roleHint(ordered, t.src, src, dst, item.value)}`,
        );
      }
    }
  }
}

/**
 * Tailscale runs sshTests with its users' roles, so a file whose owner's login is tested against
 * ssh rules for autogroup:admin passes there: say why it fails here, and what to write instead.
 */
function roleHint(rules: SshRule[], srcEnd: Endpoint, src: Subject, dst: Subject, user: string): string {
  if (srcEnd.sel.kind !== 'user' || src.keys.has('a:admin')) return '';
  const admin = { ...src, keys: new Set([...src.keys, 'a:admin']) };
  if (!rules.some((r) => ruleLetsIn(r, admin, dst, user))) return '';
  return `; tests know no roles, so ssh rules for autogroup:admin do not count for ${srcEnd.text}: name it (or a group holding it) in the rule's src`;
}

// The `ssh` section: who may open a Tailscale SSH session on which devices, as which local
// users. Tailscale's syntax and restrictions (kb/1337 policy syntax, kb/1193 Tailscale SSH):
// sources and destinations are identities, never addresses; a destination holding user-owned
// devices needs sources that cannot be anyone else (autogroup:self, or the one user itself),
// and tagged sources never reach user-owned devices. Every problem is reported at its entry.

import type { Node } from 'jsonc-parser';
import { type Checker, POSTURE_FIELD, type StringItem } from './checker.js';
import { type Definitions, parseSelector } from './selectors.js';
import type { Selector, SshRule, SshUsers } from './types.js';

const SSH_FIELDS = ['action', 'src', 'dst', 'users', 'checkPeriod', 'acceptEnv'];

/** Tailscale's default check period, and the longest it accepts. */
export const DEFAULT_CHECK_PERIOD_MS = 12 * 3_600_000;
export const MAX_CHECK_PERIOD_MS = 168 * 3_600_000;
const MIN_CHECK_PERIOD_MS = 60_000;

const SOURCE_KINDS = new Set<Selector['kind']>(['user', 'group', 'tag', 'member', 'tagged', 'admin']);
const TAG_KINDS = new Set<Selector['kind']>(['tag', 'tagged']);

/** A local user name as Tailscale SSH takes it: no spaces, no colon (autogroup:, localpart:). */
const LOCAL_USER_RE = /^[A-Za-z0-9._][A-Za-z0-9._@$-]*$/;
const LOCALPART_RE = /^localpart:\*@([^\s@:,*]+)$/;
/** An environment variable name, with `*` and `?` as wildcards (SSHRule.AcceptEnv). */
const ENV_NAME_RE = /^[A-Za-z0-9_*?]+$/;
/** A Go duration as Tailscale reads checkPeriod: hours, minutes and seconds, in that order. */
const GO_DURATION_RE = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

export function checkSsh(node: Node, c: Checker, defs: Definitions, out: SshRule[]): void {
  if (node.type !== 'array') {
    c.error(node, '"ssh" must be an array of rules');
    return;
  }
  for (const ruleNode of node.children ?? []) {
    const f = c.fields(ruleNode, 'an ssh rule', SSH_FIELDS, { srcPosture: POSTURE_FIELD });
    if (!f) continue;
    for (const field of ['action', 'src', 'dst', 'users']) {
      if (!f.has(field)) c.error(ruleNode, `ssh rule is missing "${field}"`);
    }
    const action = checkAction(f.get('action'), c);
    const srcItems = f.has('src') ? c.strings(f.get('src') as Node, '"src"') : [];
    const src = sources(srcItems, c, defs);
    const dst = destinations(f.has('dst') ? c.strings(f.get('dst') as Node, '"dst"') : [], src, c, defs);
    const users = checkUsers(f.get('users'), c);
    const checkPeriodMs = checkPeriod(f.get('checkPeriod'), action, c);
    const acceptEnv: string[] = [];
    const envNode = f.get('acceptEnv');
    for (const item of envNode ? c.strings(envNode, '"acceptEnv"') : []) {
      if (ENV_NAME_RE.test(item.value)) acceptEnv.push(item.value);
      else c.error(item.node, `acceptEnv "${item.value}" is not a variable name (letters, digits, "_", "*" and "?")`);
    }
    if (action === null) continue;
    out.push({ line: c.line(ruleNode), action, src: src.map((s) => s.sel), dst, users, checkPeriodMs, acceptEnv });
  }
}

function checkAction(node: Node | undefined, c: Checker): SshRule['action'] | null {
  if (!node) return null;
  const action = c.string(node, '"action"');
  if (action === 'accept' || action === 'check') return action;
  if (action !== null) c.error(node, `ssh action "${action}" is not supported: use "accept" or "check"`);
  return null;
}

interface Source {
  item: StringItem;
  sel: Selector;
}

function sources(items: StringItem[], c: Checker, defs: Definitions): Source[] {
  const out: Source[] = [];
  for (const item of items) {
    const r = parseSelector(item.value, defs);
    if (!r.ok) {
      if (r.msg) c.error(item.node, r.msg);
    } else if (!SOURCE_KINDS.has(r.sel.kind)) {
      c.error(
        item.node,
        `ssh src "${item.value}" is not allowed: use users, groups, tags, autogroup:member, autogroup:tagged or autogroup:admin`,
      );
    } else out.push({ item, sel: r.sel });
  }
  return out;
}

/**
 * The destinations, each checked against the sources: who may log in to a user's devices is
 * that user (autogroup:self, or a rule from the user alone to itself); tags never may.
 */
function destinations(items: StringItem[], src: Source[], c: Checker, defs: Definitions): Selector[] {
  const out: Selector[] = [];
  const tagSource = src.find((s) => TAG_KINDS.has(s.sel.kind));
  for (const item of items) {
    const r = parseSelector(item.value, defs);
    if (!r.ok) {
      if (r.msg) c.error(item.node, r.msg);
      continue;
    }
    const { sel } = r;
    if (sel.kind === 'all') {
      c.error(item.node, 'ssh dst "*" is not allowed: name tags, autogroup:tagged or autogroup:self');
    } else if (sel.kind === 'prefix' || sel.kind === 'internet' || sel.kind === 'group' || sel.kind === 'admin') {
      c.error(
        item.node,
        `ssh dst "${item.value}" is not allowed: use tags, autogroup:tagged, autogroup:self, autogroup:member or a user`,
      );
    } else if (tagSource && (sel.kind === 'user' || sel.kind === 'self' || sel.kind === 'member')) {
      c.error(
        item.node,
        `ssh dst "${item.value}" holds user-owned devices, which a tagged source ("${tagSource.item.value}") may not log in to: use tags or autogroup:tagged as dst, or move the tag to a rule of its own`,
      );
    } else if (sel.kind === 'user' && !src.every((s) => s.sel.kind === 'user' && s.sel.login === sel.login)) {
      c.error(
        item.node,
        `ssh dst "${item.value}" is a user's devices, which only that user may log in to: its src must be "${sel.login}" alone, or use autogroup:self`,
      );
    } else out.push(sel);
  }
  return out;
}

function checkUsers(node: Node | undefined, c: Checker): SshUsers {
  const users: SshUsers = { root: false, nonroot: false, named: [], localparts: [] };
  if (!node) return users;
  const items = c.strings(node, '"users"');
  if (node.type === 'array' && items.length === 0 && (node.children ?? []).length === 0) {
    c.error(node, 'ssh "users" is empty: name root, autogroup:nonroot, localpart:*@domain or local users');
  }
  for (const { value, node: at } of items) {
    const localpart = LOCALPART_RE.exec(value);
    if (value === 'root') users.root = true;
    else if (value === 'autogroup:nonroot') users.nonroot = true;
    else if (localpart) users.localparts.push(localpart[1].toLowerCase());
    else if (value.startsWith('localpart:')) c.error(at, `invalid ssh user "${value}": write "localpart:*@domain"`);
    else if (value.startsWith('autogroup:'))
      c.error(at, `unknown ssh user "${value}": the autogroup is autogroup:nonroot`);
    else if (value === '*') c.error(at, 'ssh user "*" is not allowed: use autogroup:nonroot (and root if meant)');
    else if (!LOCAL_USER_RE.test(value)) c.error(at, `invalid ssh user "${value}"`);
    else if (!users.named.includes(value)) users.named.push(value);
  }
  return users;
}

/** The check period in ms: 0 for "always", the default when absent; reported on an accept rule. */
function checkPeriod(node: Node | undefined, action: SshRule['action'] | null, c: Checker): number {
  if (!node) return DEFAULT_CHECK_PERIOD_MS;
  const text = c.string(node, '"checkPeriod"');
  if (text === null) return DEFAULT_CHECK_PERIOD_MS;
  if (action === 'accept') {
    c.error(node, '"checkPeriod" applies to "check" rules only');
    return DEFAULT_CHECK_PERIOD_MS;
  }
  if (text === 'always') return 0;
  const m = GO_DURATION_RE.exec(text);
  const ms =
    m && text !== '' ? Number(m[1] ?? 0) * 3_600_000 + Number(m[2] ?? 0) * 60_000 + Number(m[3] ?? 0) * 1000 : NaN;
  if (Number.isNaN(ms)) {
    c.error(node, `invalid checkPeriod "${text}": write a duration such as "12h", "30m" or "1h30m", or "always"`);
  } else if (ms < MIN_CHECK_PERIOD_MS || ms > MAX_CHECK_PERIOD_MS) {
    c.error(node, `checkPeriod "${text}" must be between 1m and 168h (or "always")`);
  } else return ms;
  return DEFAULT_CHECK_PERIOD_MS;
}

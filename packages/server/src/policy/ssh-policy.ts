// The SSH policy one device enforces, in the shape of Tailscale's tailcfg.SSHPolicy: for each
// `ssh` rule whose dst holds the device, the addresses of the devices in its map that the
// rule's src selects (autogroup:self: those of the device's own user only), the local users
// they may log in as, and the action. The client takes the first rule matching both the
// connecting address and the user asked for, so rules that ask (check) come before those that
// accept, as Tailscale orders them; within each, the policy's order.
//
// Only the rules naming one of the device's principal keys (or autogroup:self, for a user's
// device) are looked at, through the compiled index: a policy without `ssh` rules costs a
// device one lookup per key, and one with rules costs it the rules that name it.

import { innerMap } from '../lib/nested-maps.js';
import { unionOfRules } from './compile.js';
import { bare, MAX_TEMPLATE_DEVICES, MAX_TEMPLATES, mapGroupKey, subjectOf } from './packet-filter.js';
import { matchesSelector, roleMap, type Subject } from './subjects.js';
import type { CompiledPolicy, PolicyDevice, PolicyUser, SshRule } from './types.js';

export interface TailcfgSshAction {
  accept?: true;
  reject?: true;
  allowAgentForwarding?: true;
  allowLocalPortForwarding?: true;
  allowRemotePortForwarding?: true;
  holdAndDelegate?: string;
  message?: string;
}

export interface TailcfgSshRule {
  principals: Array<{ nodeIP: string }>;
  /** Requested user (or `*`) → local user; `=` keeps the name asked for, '' refuses it. */
  sshUsers: Record<string, string>;
  action: TailcfgSshAction;
  acceptEnv?: string[];
}

export interface TailcfgSshPolicy {
  rules: TailcfgSshRule[];
}

/**
 * What an accepting rule allows besides the session, as Tailscale's own control plane sends; also
 * the answer to a check once confirmed (control/tailscale/ssh-action.ts).
 */
export const SSH_ACCEPT: TailcfgSshAction = {
  accept: true,
  allowAgentForwarding: true,
  allowLocalPortForwarding: true,
  allowRemotePortForwarding: true,
};

/** The policy of a device no rule names: the client refuses every connection. */
export const NO_SSH_RULES = '{"rules":[]}';

/** The rules whose dst could hold the viewer, in policy order (a superset: compileRules decides). */
function sshRulesNaming(policy: CompiledPolicy, viewer: Subject): readonly number[] {
  const idx = policy.index;
  const lists: Array<readonly number[] | undefined> = [];
  for (const key of viewer.keys) lists.push(idx.keySshDstRules.get(key));
  if (viewer.owner !== null) lists.push(idx.selfSshDstRules);
  return unionOfRules(lists);
}

/** The local users a rule maps, Tailscale's way: root is refused unless named. */
function sshUsersOf(rule: SshRule): Record<string, string> {
  const out: Record<string, string> = {};
  if (rule.users.nonroot) out['*'] = '=';
  out.root = rule.users.root ? 'root' : '';
  for (const name of rule.users.named) out[name] = name;
  return out;
}

/** The local part of a login when its domain is one of `domains`. */
function localpartOf(login: string, domains: readonly string[]): string | undefined {
  const at = login.lastIndexOf('@');
  if (at <= 0 || !domains.includes(login.slice(at + 1).toLowerCase())) return undefined;
  return login.slice(0, at);
}

/**
 * Where a check rule sends the destination's client when a connection arrives (fetched over its
 * Noise channel, the variables filled in by the client): `base`, the action URLs' prefix in the
 * viewer's network (control/tailscale/ssh-action.ts checkActionBase), the source's id and
 * address (by which Warren finds it with one index probe), and how long a confirmation lets the
 * same source in, in seconds (0: each connection asks).
 */
export function checkActionUrl(base: string, periodMs: number): string {
  return `${base}/$SRC_NODE_ID/to/$DST_NODE_ID?src_ip=$SRC_NODE_IP&local_user=$LOCAL_USER&period=${Math.round(periodMs / 1000)}`;
}

/** `checkBase`: the prefix of the URLs that check rules' actions name (checkActionUrl). */
export function sshPolicy(
  policy: CompiledPolicy,
  viewer: PolicyDevice,
  devices: readonly PolicyDevice[],
  users: readonly PolicyUser[],
  checkBase = '',
): TailcfgSshPolicy {
  if (policy.ssh.length === 0) return { rules: [] };
  const roles = roleMap(users);
  const me = subjectOf(policy, roles, viewer);
  const candidates = sshRulesNaming(policy, me);
  if (candidates.length === 0) return { rules: [] };
  const inMap = devices.map((device) => ({ device, subject: subjectOf(policy, roles, device) }));
  const asking: TailcfgSshRule[] = [];
  const accepting: TailcfgSshRule[] = [];
  for (const at of candidates) {
    const rule = policy.ssh[at];
    const byIdentity = rule.dst.some((sel) => sel.kind !== 'self' && matchesSelector(sel, me, 'overlap'));
    const bySelf = me.owner !== null && rule.dst.some((sel) => sel.kind === 'self');
    const principals: TailcfgSshRule['principals'] = [];
    // Per source user, for localpart:*@domain: that user's devices log in as its local part.
    const byLocalpart = new Map<string, TailcfgSshRule['principals']>();
    for (const { device, subject } of inMap) {
      if (!byIdentity && !(bySelf && subject.owner === me.owner)) continue;
      if (!rule.src.some((sel) => matchesSelector(sel, subject, 'overlap'))) continue;
      const ips = device.addresses.map((a) => ({ nodeIP: bare(a) }));
      principals.push(...ips);
      const local = subject.owner === null ? undefined : localpartOf(subject.owner, rule.users.localparts);
      if (local !== undefined) byLocalpart.set(local, [...(byLocalpart.get(local) ?? []), ...ips]);
    }
    if (principals.length === 0) continue;
    const env = rule.acceptEnv.length > 0 ? { acceptEnv: [...rule.acceptEnv] } : {};
    const action =
      rule.action === 'check' ? { holdAndDelegate: checkActionUrl(checkBase, rule.checkPeriodMs) } : SSH_ACCEPT;
    const out = rule.action === 'check' ? asking : accepting;
    out.push({ principals, sshUsers: sshUsersOf(rule), action, ...env });
    for (const [local, ips] of byLocalpart) {
      out.push({ principals: ips, sshUsers: { [local]: local }, action, ...env });
    }
  }
  return { rules: [...asking, ...accepting] };
}

/** SSH policies as JSON, per policy and users (roleMap's map), by mapGroupKey. */
const texts = new WeakMap<CompiledPolicy, WeakMap<Map<string, string>, Map<string, string>>>();

const asJson = (result: TailcfgSshPolicy): string =>
  result.rules.length === 0 ? NO_SSH_RULES : JSON.stringify(result);

/**
 * sshPolicy as the JSON a map sends. It depends on the viewer only through its identity (the
 * keys and owner its rules are found by; ssh rules name no addresses) and on the devices of its
 * map, so the devices that share both (a user's devices that see each other) share one text,
 * made once per policy change, as the packet filter's template is (packetFilterJson).
 */
export function sshPolicyJson(
  policy: CompiledPolicy,
  viewer: PolicyDevice,
  devices: readonly PolicyDevice[],
  users: readonly PolicyUser[],
  checkBase = '',
): string {
  if (policy.ssh.length === 0) return NO_SSH_RULES;
  if (devices.length > MAX_TEMPLATE_DEVICES) return asJson(sshPolicy(policy, viewer, devices, users, checkBase));
  const roles = roleMap(users);
  const key = `${checkBase}\n${mapGroupKey(subjectOf(policy, roles, viewer), devices)}`;
  const byKey = innerMap(innerMap(texts, policy, WeakMap), roles, Map);
  let text = byKey.get(key);
  if (text === undefined) {
    if (byKey.size >= MAX_TEMPLATES) byKey.clear();
    text = asJson(sshPolicy(policy, viewer, devices, users, checkBase));
    byKey.set(key, text);
  }
  return text;
}

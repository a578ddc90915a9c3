// Selector syntax: what a string in src, dst, tagOwners, autoApprovers or tests refers to.
// Each section then decides which kinds it allows.

import { TAG_RE, TAG_SYNTAX } from '@warren/contract';
import { looksLikeAddress, type Prefix, parsePrefix } from './cidr.js';
import type { Selector } from './types.js';
export const GROUP_RE = /^group:[A-Za-z0-9][A-Za-z0-9._-]*$/;
// Colons and commas are kept out of login names: `ana@example.com:22` must split unambiguously.
export const LOGIN_RE = /^[^\s@:,]+@[^\s@:,]+$/;
export const HOST_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Names defined by the policy itself, which selectors must refer to. */
export interface Definitions {
  groups: ReadonlySet<string>;
  tags: ReadonlySet<string>;
  /** Alias → its prefix, or null when the alias exists but its value is invalid (already reported). */
  hosts: ReadonlyMap<string, Prefix | null>;
  /**
   * Results by text, once every name is defined: policies repeat the same selectors in many
   * rules, and sharing one parsed selector saves both time and memory.
   */
  memo?: Map<string, SelectorResult>;
  /** The same for `selector:ports` destinations (see validate-rules.ts). */
  dstMemo?: Map<string, unknown>;
}

/** `msg: null` means "invalid, but already reported elsewhere" (a host alias with a bad value). */
export type SelectorResult = { ok: true; sel: Selector } | { ok: false; msg: string | null };

const AUTOGROUPS: Record<string, Selector> = {
  'autogroup:member': { kind: 'member', key: 'a:member' },
  'autogroup:tagged': { kind: 'tagged', key: 'a:tagged' },
  'autogroup:admin': { kind: 'admin', key: 'a:admin' },
  'autogroup:self': { kind: 'self' },
  'autogroup:internet': { kind: 'internet' },
};

export function parseSelector(text: string, defs: Definitions): SelectorResult {
  let r = defs.memo?.get(text);
  if (!r) {
    r = parseUncached(text, defs);
    defs.memo?.set(text, r);
  }
  return r;
}

/**
 * Tailscale's older spellings of an autogroup, which it still reads as the current one (its own
 * default policy file and demo wrote `autogroup:members` in ssh rules): same meaning here.
 */
const OLDER_AUTOGROUPS: Record<string, string> = { 'autogroup:members': 'autogroup:member' };

export const IPSETS_UNSUPPORTED =
  'IP sets are not supported: name an address or a prefix with a host alias ("hosts"), or list the prefixes in the rules';

/**
 * Autogroups of Tailscale's policy that Warren's does not have, with why and what to write
 * instead. Warren's roles (owner, admin, network-admin, it-admin, auditor, member) are named in
 * a policy only through autogroup:admin, which the contract defines as owners and admins.
 */
const ROLES_AS_ADMIN = 'roles are named in a policy only by autogroup:admin (owners and admins): use it, or a group';
const FOREIGN_AUTOGROUPS: Record<string, string> = {
  'autogroup:owner': ROLES_AS_ADMIN,
  'autogroup:it-admin': ROLES_AS_ADMIN,
  'autogroup:network-admin': ROLES_AS_ADMIN,
  'autogroup:billing-admin': ROLES_AS_ADMIN,
  'autogroup:auditor': ROLES_AS_ADMIN,
  'autogroup:shared': 'Warren shares no devices between networks, so no device is shared with a user',
  'autogroup:danger-all':
    'a network holds only its own devices (nothing is shared or funneled in): "*" stands for every device',
  'autogroup:nonroot': 'it names local users only, in the "users" of ssh rules',
};

function parseUncached(text: string, defs: Definitions): SelectorResult {
  if (text === '*') return { ok: true, sel: { kind: 'all' } };
  if (text !== text.trim()) {
    return { ok: false, msg: `"${text}" has white space around it: write "${text.trim()}"` };
  }
  if (text.startsWith('autogroup:')) {
    const sel = AUTOGROUPS[OLDER_AUTOGROUPS[text] ?? text];
    if (sel) return { ok: true, sel };
    const why = FOREIGN_AUTOGROUPS[text];
    if (why) return { ok: false, msg: `${text} is not supported: ${why}` };
    return {
      ok: false,
      msg: `unknown autogroup "${text}" (expected one of ${Object.keys(AUTOGROUPS).join(', ')})`,
    };
  }
  if (text.startsWith('ipset:')) return { ok: false, msg: `"${text}": ${IPSETS_UNSUPPORTED}` };
  if (text.startsWith('user:')) {
    return {
      ok: false,
      msg: text.startsWith('user:*@')
        ? `"${text}" (every user of a domain) is not supported: list the users' login names, or a group of them`
        : `"${text}": write the login name without "user:"`,
    };
  }
  if (/^[^\s@:,]+@$/.test(text)) {
    return {
      ok: false,
      msg: `"${text}" is a Headscale user name: Warren names users by their login name, such as "${text}example.com"`,
    };
  }
  if (text.startsWith('group:')) {
    if (!GROUP_RE.test(text)) return { ok: false, msg: `invalid group name "${text}"` };
    if (!defs.groups.has(text)) return { ok: false, msg: `group "${text}" is not defined` };
    return { ok: true, sel: { kind: 'group', name: text, key: `g:${text}` } };
  }
  if (text.startsWith('tag:')) {
    if (!TAG_RE.test(text)) return { ok: false, msg: `invalid tag "${text}": ${TAG_SYNTAX}` };
    if (!defs.tags.has(text)) return { ok: false, msg: `tag "${text}" is not defined in tagOwners` };
    return { ok: true, sel: { kind: 'tag', tag: text, key: `t:${text}` } };
  }
  if (text.includes('@')) {
    if (!LOGIN_RE.test(text)) return { ok: false, msg: `invalid login name "${text}"` };
    return { ok: true, sel: { kind: 'user', login: text, key: `u:${text}` } };
  }
  if (looksLikeAddress(text)) {
    const r = parsePrefix(text);
    return r.ok ? { ok: true, sel: { kind: 'prefix', prefix: r.prefix } } : { ok: false, msg: r.msg };
  }
  const host = defs.hosts.get(text);
  if (host) return { ok: true, sel: { kind: 'prefix', prefix: host } };
  if (host === null) return { ok: false, msg: null };
  if (HOST_RE.test(text)) return { ok: false, msg: `host "${text}" is not defined` };
  return { ok: false, msg: `invalid selector "${text}"` };
}

/**
 * The principal key of a selector naming an identity; null for `*`, prefixes, autogroup:self
 * and autogroup:internet.
 */
export function selectorKey(sel: Selector): string | null {
  return 'key' in sel ? sel.key : null;
}

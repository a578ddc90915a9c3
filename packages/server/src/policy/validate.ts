// validatePolicy: the one function behind both PUT /v1/acl and POST /v1/acl/validate. It walks
// the whole document once and reports every problem, each at the offending key or value, then
// compiles what it read and runs the policy's own `tests` and `sshTests` against it.

import { TAG_RE, TAG_SYNTAX } from '@warren/contract';
import type { Node } from 'jsonc-parser';
import { Checker, isEmptyValue, nameSpelled, POSTURE_UNSUPPORTED } from './checker.js';
import type { Prefix } from './cidr.js';
import { parsePrefix } from './cidr.js';
import { compile } from './compile.js';
import { parseHujson } from './hujson.js';
import { type Definitions, GROUP_RE, HOST_RE, IPSETS_UNSUPPORTED, LOGIN_RE, parseSelector } from './selectors.js';
import { parseSshTests, runSshTests } from './ssh-tests.js';
import { type PolicyTestResult, parseTests, runTests } from './tests.js';
import type { CompiledPolicy, ParsedPolicy, PolicyError, Selector } from './types.js';
import { checkGrants } from './validate-grants.js';
import { checkAcls, checkAutoApprovers } from './validate-rules.js';
import { checkSsh } from './validate-ssh.js';

/**
 * `tests`: each entry of the policy's `tests` with whether it passed; empty when the text does
 * not parse (a tree recovered from broken syntax is not run).
 */
export type ValidateResult = (
  | { ok: true; policy: CompiledPolicy; parsed: ParsedPolicy; errors: [] }
  | { ok: false; errors: PolicyError[] }
) & { tests: PolicyTestResult[] };

const SECTIONS = ['groups', 'tagOwners', 'hosts', 'acls', 'grants', 'autoApprovers', 'ssh', 'tests', 'sshTests'];

/**
 * `runTests: false` skips running the policy's `tests` (they are still read and checked): for a
 * policy already stored, whose tests passed when it was. `asTailscale: true` reads the text as
 * Tailscale would, for a text sent through its API (/api/v2, where Tailscale's tools send their
 * files): a file with neither acls nor grants is then refused (checkRulesPresent). Only a text
 * being submitted is read so: a stored text keeps the meaning it was stored with, since a network
 * whose stored policy failed to load would not be served at all.
 */
export function validatePolicy(
  text: string,
  options: { runTests?: boolean; asTailscale?: boolean } = {},
): ValidateResult {
  const { root, syntaxErrors, duplicateKeys, lines } = parseHujson(text);
  // A tree recovered from broken syntax would produce misleading semantic errors (a section cut
  // short looks like undefined groups), so syntax errors are reported on their own.
  if (!root || syntaxErrors.length > 0) {
    return { ok: false, errors: reported([...syntaxErrors, ...duplicateKeys]), tests: [] };
  }
  const c = new Checker(lines);
  for (const e of duplicateKeys) c.errors.push(e);
  const sections = readSections(root, c);
  if (options.asTailscale) checkRulesPresent(root, sections, c);
  const defs: Defs = { groups: new Set(), tags: new Set(), hosts: new Map() };
  const parsed: ParsedPolicy = {
    groups: new Map(),
    tagOwners: new Map(),
    hosts: new Map(),
    rules: [],
    autoApprovers: { routes: [], exitNode: [] },
    ssh: [],
  };
  // Definitions first, wherever they appear in the document, so references can be checked.
  for (const node of sections.get('hosts') ?? []) checkHosts(node, c, defs, parsed);
  for (const node of sections.get('groups') ?? []) checkGroups(node, c, defs, parsed);
  const owners = (sections.get('tagOwners') ?? []).map((node) => declareTags(node, c, defs));
  // Every name is defined from here on, so selector parses can be shared.
  defs.memo = new Map();
  defs.dstMemo = new Map();
  for (const props of owners) checkTagOwners(props, c, defs, parsed);
  for (const node of sections.get('acls') ?? []) checkAcls(node, c, defs, parsed.rules);
  for (const node of sections.get('grants') ?? []) checkGrants(node, c, defs, parsed.rules);
  for (const node of sections.get('autoApprovers') ?? []) checkAutoApprovers(node, c, defs, parsed.autoApprovers);
  for (const node of sections.get('ssh') ?? []) checkSsh(node, c, defs, parsed.ssh);
  const results: PolicyTestResult[] = [];
  const tests = (sections.get('tests') ?? []).flatMap((node) => parseTests(node, c, defs, results));
  const sshTests = (sections.get('sshTests') ?? []).flatMap((node) => parseSshTests(node, c, defs));
  const policy = compile(parsed);
  if (options.runTests !== false) {
    runTests(policy, tests, c);
    runSshTests(policy, sshTests, c);
  }
  for (const r of results) r.failures = reported(r.failures);
  if (c.errors.length > 0) return { ok: false, errors: reported(c.errors), tests: results };
  return { ok: true, policy, parsed, errors: [], tests: results };
}

/** The compiled policy of a valid text (its tests are not run again: see validatePolicy). */
export function compilePolicy(text: string): CompiledPolicy {
  const result = validatePolicy(text, { runTests: false });
  if (result.ok) return result.policy;
  const first = result.errors[0];
  const more = result.errors.length > 1 ? ` (and ${result.errors.length - 1} more)` : '';
  const err = new Error(`invalid policy: line ${first.line}, column ${first.column}: ${first.msg}${more}`);
  (err as Error & { errors: PolicyError[] }).errors = result.errors;
  throw err;
}

/**
 * Problems reported at most: a 1 MiB document can hold half a million wrong values, and listing
 * each made a 40 MB answer that no editor shows and that took the server longer to write than
 * to find. The first ones in document order are listed, then one more entry says how many
 * follow and where the next one is.
 */
export const MAX_REPORTED_ERRORS = 1_000;

function reported(errors: PolicyError[]): PolicyError[] {
  const sorted = [...errors].sort((a, b) => a.line - b.line || a.column - b.column);
  if (sorted.length <= MAX_REPORTED_ERRORS) return sorted;
  const next = sorted[MAX_REPORTED_ERRORS];
  const more = sorted.length - MAX_REPORTED_ERRORS;
  const listed = sorted.slice(0, MAX_REPORTED_ERRORS);
  listed.push({
    ...next,
    msg: `${more} more problems from here on (only the first ${MAX_REPORTED_ERRORS} are listed)`,
  });
  return listed;
}

/**
 * Sections of Tailscale's policy file that Warren does not have, with why. Empty (`[]`, `{}`,
 * `null`) they mean nothing, so a file that carries them empty is accepted as Tailscale reads it;
 * with content each is refused at its key, never ignored: a file that relied on it would not mean
 * on Warren what it meant there.
 */
const UNSUPPORTED_SECTIONS: Record<string, string> = {
  nodeAttrs:
    'node attributes are not supported: Warren gives devices no attributes (Funnel, Mullvad exit nodes, NextDNS, Taildrive sharing and the like)',
  attrConfig: 'custom node attributes are not supported: Warren gives devices no attributes, so none can be declared',
  postures: POSTURE_UNSUPPORTED,
  defaultSrcPosture: POSTURE_UNSUPPORTED,
  ipsets: IPSETS_UNSUPPORTED,
  derpMap:
    'a DERP map in the policy is not supported: the server sets the relays devices use (--derp, or WARREN_DERP_MAP: docs/OPERATIONS.md)',
};

/**
 * Tailnet-wide settings of Tailscale's policy file: at Tailscale's default they change nothing and
 * are accepted; any other value asks for behaviour Warren does not have and is refused.
 */
const SETTINGS: Record<string, { default: boolean | string; msg: string }> = {
  disableIPv4: {
    default: false,
    msg: 'turning IPv4 off is not supported: every device has an IPv4 address; remove the setting or set it to false',
  },
  randomizeClientPort: {
    default: false,
    msg: 'random client ports are not supported: devices keep the port they choose; remove the setting or set it to false',
  },
  OneCGNATRoute: {
    default: '',
    msg: 'choosing how devices route the CGNAT range is not supported; remove the setting or set it to ""',
  },
};

function readSections(root: Node, c: Checker): Map<string, Node[]> {
  const sections = new Map<string, Node[]>();
  const spelledBy = new Map<string, string>();
  const props = c.object(root, 'the policy');
  for (const { key, keyNode, value } of props ?? []) {
    // In any letter case, as Tailscale reads its file (`"ACLs"`, `"TagOwners"`: checker.ts).
    const name = nameSpelled(key, SECTIONS);
    if (name === undefined) {
      const problem = foreignSection(key, value);
      if (problem) c.error(keyNode, problem);
      continue;
    }
    const earlier = spelledBy.get(name);
    if (earlier !== undefined && earlier !== key) {
      c.error(keyNode, `"${key}" and "${earlier}" are both the section "${name}": write it once, as "${name}"`);
      continue;
    }
    spelledBy.set(name, key);
    const list = sections.get(name);
    if (list) list.push(value);
    else sections.set(name, [value]);
  }
  return sections;
}

/**
 * A file with neither `acls` nor `grants` lets every device reach every other on every port in
 * Tailscale, and allows nothing in Warren. Sent through Tailscale's API it is refused, so that a
 * file a Tailscale tool pushes is not read with the opposite meaning, and Warren's own reading is
 * written out (`"acls": []`): the meaning Tailscale gives it is the over-permissive rule the
 * contract refuses. On /v1 the text means what Warren's contract says, nothing allowed.
 */
function checkRulesPresent(root: Node, sections: Map<string, Node[]>, c: Checker): void {
  if (root.type !== 'object' || sections.has('acls') || sections.has('grants')) return;
  c.error(
    root,
    'the policy has neither "acls" nor "grants": Tailscale reads such a file as letting every device reach every other on every port, which Warren refuses as over-permissive; write the rules you mean, or "acls": [] to allow nothing',
  );
}

/** What is wrong with a top-level key that is none of Warren's sections; null when nothing is. */
function foreignSection(key: string, value: Node): string | null {
  const unsupported = nameSpelled(key, Object.keys(UNSUPPORTED_SECTIONS));
  if (unsupported !== undefined) {
    return isEmptyValue(value) ? null : `"${key}": ${UNSUPPORTED_SECTIONS[unsupported]}; remove the section`;
  }
  const settingName = nameSpelled(key, Object.keys(SETTINGS));
  if (settingName !== undefined) {
    const setting = SETTINGS[settingName];
    return value.value === setting.default || value.type === 'null' ? null : `"${key}": ${setting.msg}`;
  }
  return `unknown section "${key}" (expected one of ${SECTIONS.join(', ')})`;
}

type Defs = Definitions & { groups: Set<string>; tags: Set<string>; hosts: Map<string, Prefix | null> };

function checkHosts(node: Node, c: Checker, defs: Defs, out: ParsedPolicy): void {
  for (const { key, keyNode, value } of c.object(node, '"hosts"') ?? []) {
    // A name made only of digits and dots would read as a malformed address wherever it is used.
    if (!HOST_RE.test(key) || /^[0-9.]+$/.test(key)) {
      c.error(keyNode, `invalid host alias "${key}": use letters, digits, ".", "_" or "-", not an address`);
    }
    const text = c.string(value, `host "${key}"`);
    const r = text === null ? null : parsePrefix(text);
    if (r && !r.ok) c.error(value, `host "${key}": ${r.msg}`);
    defs.hosts.set(key, r?.ok ? r.prefix : null);
    if (r?.ok) out.hosts.set(key, r.prefix);
  }
}

function checkGroups(node: Node, c: Checker, defs: Defs, out: ParsedPolicy): void {
  for (const { key, keyNode, value } of c.object(node, '"groups"') ?? []) {
    if (!GROUP_RE.test(key)) {
      c.error(keyNode, `invalid group name "${key}": use "group:" then letters, digits, ".", "_" or "-"`);
    }
    defs.groups.add(key);
    // Members in order of first appearance, each once (a Set keeps both, in linear time).
    const logins = new Set<string>();
    for (const m of c.strings(value, `group "${key}"`)) {
      if (m.value === key) c.error(m.node, `group "${key}" contains itself`);
      else if (m.value.startsWith('group:')) {
        c.error(m.node, `group "${key}" contains group "${m.value}": groups hold login names only, not other groups`);
      } else if (!LOGIN_RE.test(m.value)) {
        c.error(m.node, `group "${key}" member "${m.value}" is not a login name (user@domain)`);
      } else logins.add(m.value);
    }
    out.groups.set(key, [...logins]);
  }
}

/** Tag owners may name other tags, so every tag is declared before any owner is checked. */
function declareTags(node: Node, c: Checker, defs: Defs): ReturnType<Checker['object']> {
  const props = c.object(node, '"tagOwners"');
  for (const { key, keyNode } of props ?? []) {
    if (!TAG_RE.test(key)) c.error(keyNode, `invalid tag "${key}": ${TAG_SYNTAX}`);
    defs.tags.add(key);
  }
  return props;
}

const OWNER_KINDS = new Set<Selector['kind']>(['user', 'group', 'tag', 'admin', 'member']);

function checkTagOwners(props: ReturnType<Checker['object']>, c: Checker, defs: Definitions, out: ParsedPolicy): void {
  for (const { key, value } of props ?? []) {
    const owners: Selector[] = [];
    for (const o of c.strings(value, `tagOwners "${key}"`)) {
      const r = parseSelector(o.value, defs);
      if (!r.ok) {
        if (r.msg) c.error(o.node, r.msg);
      } else if (!OWNER_KINDS.has(r.sel.kind)) {
        c.error(o.node, `tag owner "${o.value}" must be a login name, group, tag, autogroup:admin or autogroup:member`);
      } else owners.push(r.sel);
    }
    out.tagOwners.set(key, owners);
  }
}

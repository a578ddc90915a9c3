// validatePolicy: the one function behind both PUT /v1/acl and POST /v1/acl/validate. It walks
// the whole document once and reports every problem, each at the offending key or value, then
// compiles what it read and runs the policy's own `tests` against it.

import type { Node } from 'jsonc-parser';
import { Checker } from './checker.js';
import type { Prefix } from './cidr.js';
import { parsePrefix } from './cidr.js';
import { compile } from './compile.js';
import { parseHujson } from './hujson.js';
import { type Definitions, GROUP_RE, HOST_RE, LOGIN_RE, parseSelector, TAG_RE, TAG_SYNTAX } from './selectors.js';
import { type PolicyTestResult, parseTests, runTests } from './tests.js';
import type { CompiledPolicy, ParsedPolicy, PolicyError, Selector } from './types.js';
import { checkGrants } from './validate-grants.js';
import { checkAcls, checkAutoApprovers } from './validate-rules.js';

/**
 * `tests`: each entry of the policy's `tests` with whether it passed; empty when the text does
 * not parse (a tree recovered from broken syntax is not run).
 */
export type ValidateResult = (
  | { ok: true; policy: CompiledPolicy; errors: [] }
  | { ok: false; errors: PolicyError[] }
) & { tests: PolicyTestResult[] };

const SECTIONS = ['groups', 'tagOwners', 'hosts', 'acls', 'grants', 'autoApprovers', 'tests'];

export function validatePolicy(text: string): ValidateResult {
  const { root, syntaxErrors, duplicateKeys, lines } = parseHujson(text);
  // A tree recovered from broken syntax would produce misleading semantic errors (a section cut
  // short looks like undefined groups), so syntax errors are reported on their own.
  if (!root || syntaxErrors.length > 0) {
    return { ok: false, errors: sortErrors([...syntaxErrors, ...duplicateKeys]), tests: [] };
  }
  const c = new Checker(lines);
  c.errors.push(...duplicateKeys);
  const sections = readSections(root, c);
  const defs: Defs = { groups: new Set(), tags: new Set(), hosts: new Map() };
  const parsed: ParsedPolicy = {
    groups: new Map(),
    tagOwners: new Map(),
    hosts: new Map(),
    rules: [],
    autoApprovers: { routes: [], exitNode: [] },
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
  const results: PolicyTestResult[] = [];
  const tests = (sections.get('tests') ?? []).flatMap((node) => parseTests(node, c, defs, results));
  const policy = compile(parsed);
  runTests(policy, tests, c);
  for (const r of results) r.failures = sortErrors(r.failures);
  if (c.errors.length > 0) return { ok: false, errors: sortErrors(c.errors), tests: results };
  return { ok: true, policy, errors: [], tests: results };
}

export function compilePolicy(text: string): CompiledPolicy {
  const result = validatePolicy(text);
  if (result.ok) return result.policy;
  const first = result.errors[0];
  const more = result.errors.length > 1 ? ` (and ${result.errors.length - 1} more)` : '';
  const err = new Error(`invalid policy: line ${first.line}, column ${first.column}: ${first.msg}${more}`);
  (err as Error & { errors: PolicyError[] }).errors = result.errors;
  throw err;
}

function sortErrors(errors: PolicyError[]): PolicyError[] {
  return [...errors].sort((a, b) => a.line - b.line || a.column - b.column);
}

function readSections(root: Node, c: Checker): Map<string, Node[]> {
  const sections = new Map<string, Node[]>();
  const props = c.object(root, 'the policy');
  for (const { key, keyNode, value } of props ?? []) {
    if (!SECTIONS.includes(key)) {
      c.error(keyNode, `unknown section "${key}" (expected one of ${SECTIONS.join(', ')})`);
      continue;
    }
    sections.set(key, [...(sections.get(key) ?? []), value]);
  }
  return sections;
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
    const logins: string[] = [];
    for (const m of c.strings(value, `group "${key}"`)) {
      if (m.value === key) c.error(m.node, `group "${key}" contains itself`);
      else if (m.value.startsWith('group:')) {
        c.error(m.node, `group "${key}" contains group "${m.value}": groups hold login names only, not other groups`);
      } else if (!LOGIN_RE.test(m.value)) {
        c.error(m.node, `group "${key}" member "${m.value}" is not a login name (user@domain)`);
      } else if (!logins.includes(m.value)) logins.push(m.value);
    }
    out.groups.set(key, logins);
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

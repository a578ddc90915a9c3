// Turns the validated document into the indexes that evaluation needs: each rule's port-blind
// summary (who may send to whom at all) and inverted maps from selectors to rules, so that a
// device only looks at the rules that can concern it.

import type { Prefix } from './cidr.js';
import { PrefixTree } from './prefix-index.js';
import { selectorKey } from './selectors.js';
import type { CompiledPolicy, CompiledRule, ParsedPolicy, RuleIndex, Selector } from './types.js';

interface SideSummary {
  all: boolean;
  keys: string[];
  prefixes: number[];
}

export function compile(parsed: ParsedPolicy): CompiledPolicy {
  // Identity maps serve evaluation, not validation: each is built on first use.
  let userGroups: Map<string, string[]> | undefined;
  let keyMaps: ReturnType<typeof identityKeyMaps> | undefined;
  const identities = () => {
    keyMaps ??= identityKeyMaps(parsed);
    return keyMaps;
  };
  const prefixIds = new Map<string, number>();
  const prefixes: Prefix[] = [];
  const prefixId = (p: Prefix): number => {
    let id = prefixIds.get(p.text);
    if (id === undefined) {
      id = prefixes.length;
      prefixIds.set(p.text, id);
      prefixes.push(p);
    }
    return id;
  };
  const summarize = (sels: Selector[]): SideSummary => {
    const side: SideSummary = { all: false, keys: [], prefixes: [] };
    const keys = new Set<string>();
    const ids = new Set<number>();
    for (const sel of sels) {
      if (sel.kind === 'all') side.all = true;
      else if (sel.kind === 'prefix') ids.add(prefixId(sel.prefix));
      else {
        const key = selectorKey(sel);
        if (key !== null) keys.add(key);
      }
    }
    side.keys = [...keys];
    side.prefixes = [...ids];
    return side;
  };

  const rules: CompiledRule[] = parsed.rules.map((r) => {
    const src = summarize(r.src);
    const dst = summarize(r.dst.map((d) => d.sel));
    return {
      line: r.line,
      src: r.src,
      dst: r.dst,
      srcAll: src.all,
      srcKeys: src.keys,
      srcPrefixes: src.prefixes,
      dstAll: dst.all,
      dstKeys: dst.keys,
      dstPrefixes: dst.prefixes,
      dstSelf: r.dst.some((d) => d.sel.kind === 'self'),
      dstInternet: r.dst.some(
        (d) =>
          d.sel.kind === 'internet' || d.sel.kind === 'all' || (d.sel.kind === 'prefix' && d.sel.prefix.bits === 0),
      ),
    };
  });

  const index: RuleIndex = {
    prefixes,
    prefixTree: new PrefixTree(prefixes),
    prefixSrcRules: prefixes.map(() => []),
    prefixDstRules: prefixes.map(() => []),
    keySrcRules: new Map(),
    keyDstRules: new Map(),
    allSrcRules: [],
    allDstRules: [],
    selfPrefixRules: [],
    get userKeys() {
      return identities().userKeys;
    },
    get tagKeys() {
      return identities().tagKeys;
    },
  };
  rules.forEach((r, i) => {
    if (r.srcAll) index.allSrcRules.push(i);
    if (r.dstAll) index.allDstRules.push(i);
    if (r.dstSelf && r.srcPrefixes.length > 0) index.selfPrefixRules.push(i);
    for (const k of r.srcKeys) push(index.keySrcRules, k, i);
    for (const k of r.dstKeys) push(index.keyDstRules, k, i);
    for (const p of r.srcPrefixes) index.prefixSrcRules[p].push(i);
    for (const p of r.dstPrefixes) index.prefixDstRules[p].push(i);
  });

  return {
    groups: parsed.groups,
    get userGroups() {
      userGroups ??= groupsByUser(parsed);
      return userGroups;
    },
    tagOwners: parsed.tagOwners,
    hosts: parsed.hosts,
    rules,
    autoApprovers: parsed.autoApprovers,
    index,
  };
}

/** Sorted union of rule-id lists from the index (returned as is when only one is non-empty). */
export function unionOfRules(lists: Iterable<readonly number[] | undefined>): number[] {
  const present: (readonly number[])[] = [];
  for (const l of lists) if (l !== undefined && l.length > 0) present.push(l);
  if (present.length === 0) return [];
  if (present.length === 1) return present[0] as number[];
  return [...new Set(present.flat())].sort((a, b) => a - b);
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Login → the groups that list it. */
function groupsByUser(parsed: ParsedPolicy): Map<string, string[]> {
  const userGroups = new Map<string, string[]>();
  for (const [group, logins] of parsed.groups) for (const login of logins) push(userGroups, login, group);
  return userGroups;
}

/** The principal keys of users and tags (see RuleIndex.userKeys). */
function identityKeyMaps(parsed: ParsedPolicy): { userKeys: Map<string, string[]>; tagKeys: Map<string, string> } {
  const userKeys = new Map<string, string[]>();
  for (const [group, logins] of parsed.groups) for (const login of logins) push(userKeys, login, `g:${group}`);
  const selectors = [
    ...parsed.rules.flatMap((r) => [...r.src, ...r.dst.map((d) => d.sel)]),
    ...parsed.autoApprovers.routes.flatMap((r) => r.approvers),
    ...parsed.autoApprovers.exitNode,
  ];
  // A login may be in thousands of groups and named by thousands of rules: one lookup each.
  const named = new Set<string>();
  for (const sel of selectors) {
    if (sel.kind === 'user' && !named.has(sel.login)) {
      named.add(sel.login);
      push(userKeys, sel.login, sel.key);
    }
  }
  const tagKeys = new Map([...parsed.tagOwners.keys()].map((t) => [t, `t:${t}`]));
  return { userKeys, tagKeys };
}

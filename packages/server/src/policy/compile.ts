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

/** Compiles in one go (validation, and every caller off the request thread). */
export function compile(parsed: ParsedPolicy): CompiledPolicy {
  return drain(compileSteps(parsed));
}

/** Runs a stepwise computation to its end without pausing. */
export function drain<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Selectors (or rules) handled between two pauses of compileSteps. */
const STEP = 256;

export interface CompileOptions {
  /**
   * Build the identity maps now (stepwise) instead of on first use: for the thread that serves
   * netmaps, whose first netmap would otherwise build them all at once.
   */
  identities?: boolean;
  /** The sorted order of the policy's prefixes, when already known (PrefixTree.sortedOrder). */
  prefixOrder?: ArrayLike<number>;
}

/**
 * Which identities and prefixes `sels` names. At module level, not inside compileSteps: a
 * generator function made anew at each compile gives its generator objects a hidden class of
 * their own, and the optimised compileSteps was deoptimised at each policy change meeting it.
 */
function* summarize(sels: readonly Selector[], prefixId: (p: Prefix) => number): Generator<void, SideSummary> {
  const side: SideSummary = { all: false, keys: [], prefixes: [] };
  const keys = new Set<string>();
  const ids = new Set<number>();
  for (let i = 0; i < sels.length; i++) {
    if (i % STEP === STEP - 1) yield;
    const sel = sels[i];
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
}

/**
 * compile() as a generator that pauses (yields) every few hundred selectors, so that a caller
 * on the request thread can spread a large policy over several turns of the event loop
 * (lib/slices.ts); the result is the same whoever drives it.
 */
export function* compileSteps(parsed: ParsedPolicy, options: CompileOptions = {}): Generator<void, CompiledPolicy> {
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

  const rules: CompiledRule[] = [];
  for (const r of parsed.rules) {
    yield;
    const src = yield* summarize(r.src, prefixId);
    const dst = yield* summarize(
      r.dst.map((d) => d.sel),
      prefixId,
    );
    rules.push({
      line: r.line,
      src: r.src,
      dst: r.dst,
      // On every rule (undefined without one): spread in only for grants with `app`, those
      // rules had a hidden class of their own, and a policy with one such grant made every
      // place that reads rules meet two.
      app: r.app,
      srcAll: src.all,
      srcKeys: src.keys,
      srcPrefixes: src.prefixes,
      dstAll: dst.all,
      dstKeys: dst.keys,
      dstPrefixes: dst.prefixes,
      dstSelf: r.dst.some((d) => d.sel.kind === 'self'),
      // An `app` grant's entries without protocols carry no traffic, through exit nodes or not.
      dstInternet: r.dst.some(
        (d) =>
          d.protos?.length !== 0 &&
          (d.sel.kind === 'internet' || d.sel.kind === 'all' || (d.sel.kind === 'prefix' && d.sel.prefix.bits === 0)),
      ),
    });
  }
  yield;

  const index: RuleIndex = {
    prefixes,
    prefixTree: new PrefixTree(prefixes, options.prefixOrder),
    prefixSrcRules: prefixes.map(() => []),
    prefixDstRules: prefixes.map(() => []),
    keySrcRules: new Map(),
    keyDstRules: new Map(),
    allSrcRules: [],
    allDstRules: [],
    selfPrefixRules: [],
    selfDstRules: [],
    keySshDstRules: new Map(),
    selfSshDstRules: [],
    get userKeys() {
      return identities().userKeys;
    },
    get tagKeys() {
      return identities().tagKeys;
    },
  };
  for (let i = 0; i < rules.length; i++) {
    yield;
    const r = rules[i];
    if (r.srcAll) index.allSrcRules.push(i);
    if (r.dstAll) index.allDstRules.push(i);
    if (r.dstSelf && r.srcPrefixes.length > 0) index.selfPrefixRules.push(i);
    if (r.dstSelf) index.selfDstRules.push(i);
    for (const k of r.srcKeys) push(index.keySrcRules, k, i);
    for (const k of r.dstKeys) push(index.keyDstRules, k, i);
    for (const p of r.srcPrefixes) index.prefixSrcRules[p].push(i);
    for (const p of r.dstPrefixes) index.prefixDstRules[p].push(i);
  }
  // `ssh` destinations are identities only (validate-ssh.ts): a key or autogroup:self each.
  for (let i = 0; i < parsed.ssh.length; i++) {
    for (const sel of parsed.ssh[i].dst) {
      if (sel.kind === 'self') pushOnce(index.selfSshDstRules, i);
      else {
        const key = selectorKey(sel);
        if (key !== null) pushOnce(innerList(index.keySshDstRules, key), i);
      }
    }
  }
  yield;
  if (options.identities) {
    userGroups = yield* groupsByUser(parsed);
    keyMaps = yield* identityKeyMapSteps(parsed);
  }

  return {
    groups: parsed.groups,
    get userGroups() {
      userGroups ??= drain(groupsByUser(parsed));
      return userGroups;
    },
    tagOwners: parsed.tagOwners,
    hosts: parsed.hosts,
    rules,
    autoApprovers: parsed.autoApprovers,
    ssh: parsed.ssh,
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

/** Appends a rule id unless it is the last one there (a rule's entries are visited in a row). */
function pushOnce(list: number[], id: number): void {
  if (list[list.length - 1] !== id) list.push(id);
}

function innerList(map: Map<string, number[]>, key: string): number[] {
  let list = map.get(key);
  if (!list) {
    list = [];
    map.set(key, list);
  }
  return list;
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Login → the groups that list it. */
function* groupsByUser(parsed: ParsedPolicy): Generator<void, Map<string, string[]>> {
  const userGroups = new Map<string, string[]>();
  for (const [group, logins] of parsed.groups) {
    for (let i = 0; i < logins.length; i++) {
      if (i % STEP === STEP - 1) yield;
      push(userGroups, logins[i], group);
    }
    yield;
  }
  return userGroups;
}

type IdentityKeyMaps = { userKeys: Map<string, string[]>; tagKeys: Map<string, string> };

/** The principal keys of users and tags (see RuleIndex.userKeys). */
function* identityKeyMapSteps(parsed: ParsedPolicy): Generator<void, IdentityKeyMaps> {
  const userKeys = new Map<string, string[]>();
  for (const [group, logins] of parsed.groups) {
    for (let i = 0; i < logins.length; i++) {
      if (i % STEP === STEP - 1) yield;
      push(userKeys, logins[i], `g:${group}`);
    }
    yield;
  }
  // A login may be in thousands of groups and named by thousands of rules: one lookup each.
  const named = new Set<string>();
  const name = (sels: readonly Selector[]) => {
    for (const sel of sels) {
      if (sel.kind === 'user' && !named.has(sel.login)) {
        named.add(sel.login);
        push(userKeys, sel.login, sel.key);
      }
    }
  };
  for (const r of parsed.rules) {
    for (let i = 0; i < r.src.length; i += STEP) {
      name(r.src.slice(i, i + STEP));
      yield;
    }
    for (let i = 0; i < r.dst.length; i += STEP) {
      name(r.dst.slice(i, i + STEP).map((d) => d.sel));
      yield;
    }
  }
  for (const r of parsed.autoApprovers.routes) {
    name(r.approvers);
    yield;
  }
  for (const r of parsed.ssh) {
    name(r.src);
    name(r.dst);
    yield;
  }
  name(parsed.autoApprovers.exitNode);
  const tagKeys = new Map([...parsed.tagOwners.keys()].map((t) => [t, `t:${t}`]));
  return { userKeys, tagKeys };
}

const identityKeyMaps = (parsed: ParsedPolicy): IdentityKeyMaps => drain(identityKeyMapSteps(parsed));

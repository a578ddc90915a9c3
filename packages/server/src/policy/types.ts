// Shapes shared by the policy engine. The public ones are re-exported from index.ts.

import type { Prefix } from './cidr.js';
import type { PortRanges } from './ports.js';
import type { ProtoSet } from './protocols.js';

export type { Protocol } from './protocols.js';

import type { PrefixTree } from './prefix-index.js';

export interface PolicyError {
  line: number;
  column: number;
  msg: string;
}

export type PolicyRole = 'owner' | 'admin' | 'network-admin' | 'it-admin' | 'auditor' | 'member';

export interface PolicyUser {
  login: string;
  role: PolicyRole;
}

export interface PolicyDevice {
  id: string;
  /** Login name of the owning user. */
  user: string | null;
  /** A tagged device is identified by its tags alone. */
  tags: string[];
  addresses: string[];
  /**
   * Approved, advertised prefixes this device serves, primary or standby: IP and CIDR selectors
   * match every router of a route, so a standby is already a peer when the primary fails.
   */
  routes: string[];
  /**
   * Of `routes`, those it serves as primary (the caller decides primary): the only ones that
   * reach peers' allowedIPs. Absent: all of `routes`.
   */
  primaryRoutes?: string[];
  online?: boolean;
}

export interface PeerView {
  id: string;
  allowedIPs: string[];
}

/**
 * One policy selector after validation. Selectors naming an identity carry its principal key
 * (`u:login`, `g:group`, `t:tag`, `a:member`, `a:tagged`, `a:admin`), the same keys a subject
 * carries (see subjects.ts), so matching is one set lookup.
 */
export type Selector =
  | { kind: 'all' }
  | { kind: 'user'; login: string; key: string }
  | { kind: 'group'; name: string; key: string }
  | { kind: 'tag'; tag: string; key: string }
  | { kind: 'member'; key: 'a:member' }
  | { kind: 'tagged'; key: 'a:tagged' }
  | { kind: 'admin'; key: 'a:admin' }
  | { kind: 'self' }
  | { kind: 'internet' }
  | { kind: 'prefix'; prefix: Prefix };

/** One destination of a rule: a selector, its ports, and the protocols they are open to. */
export interface CompiledDst {
  sel: Selector;
  ports: PortRanges;
  protos: ProtoSet;
}

/**
 * A grant's `app`: capability name → its values (JSON objects), in the order written. Sent as
 * the CapMap of tailcfg.CapGrant to each destination device, for the sources' addresses.
 */
export type AppCapabilities = Readonly<Record<string, readonly unknown[]>>;

/** An `acls` rule or a grant: both compile to this. */
export interface CompiledRule {
  /** Line of the rule's opening brace, for messages such as "the rule at line 12 accepts it". */
  line: number;
  src: Selector[];
  /**
   * A grant with `app` and no `ip` has one entry per dst selector with no protocol (`protos`
   * empty): it opens no traffic, but its devices are peers, as in Tailscale.
   */
  dst: CompiledDst[];
  /** A grant's application capabilities, if it has `app`. */
  app?: AppCapabilities;
  // Port- and protocol-blind summaries: peer visibility only asks "any traffic at all?".
  srcAll: boolean;
  srcKeys: string[];
  srcPrefixes: number[];
  dstAll: boolean;
  dstKeys: string[];
  dstPrefixes: number[];
  dstSelf: boolean;
  /** dst reaches the internet through exit nodes: autogroup:internet, `*`, 0.0.0.0/0 or ::/0. */
  dstInternet: boolean;
}

export interface AutoApprovers {
  routes: Array<{ prefix: Prefix; approvers: Selector[] }>;
  exitNode: Selector[];
}

/** The local users an `ssh` rule lets its sources log in as. */
export interface SshUsers {
  root: boolean;
  /** autogroup:nonroot: any user but root, under the name asked for. */
  nonroot: boolean;
  /** Users named as they are. */
  named: string[];
  /** Domains of `localpart:*@domain`: a source user of that domain logs in as its login's local part. */
  localparts: string[];
}

/**
 * An `ssh` rule as validated (validate-ssh.ts). Its sources are users, groups, tags or the
 * member, tagged and admin autogroups; its destinations tags, users, autogroup:self,
 * autogroup:member or autogroup:tagged: identities only, never addresses.
 */
export interface SshRule {
  line: number;
  action: 'accept' | 'check';
  src: Selector[];
  dst: Selector[];
  users: SshUsers;
  /** For `check`: how long an approval holds, in ms; 0 asks on every connection ("always"). */
  checkPeriodMs: number;
  acceptEnv: string[];
}

/** Everything validation extracted from the document, before indexing. */
export interface ParsedPolicy {
  groups: Map<string, string[]>;
  tagOwners: Map<string, Selector[]>;
  hosts: Map<string, Prefix>;
  rules: Array<Pick<CompiledRule, 'line' | 'src' | 'dst' | 'app'>>;
  autoApprovers: AutoApprovers;
  ssh: SshRule[];
}

/** Inverted indexes from selectors to the rules that use them. */
export interface RuleIndex {
  /** Distinct address prefixes used by rules (directly or through host aliases), by id. */
  prefixes: Prefix[];
  prefixTree: PrefixTree;
  prefixSrcRules: number[][];
  prefixDstRules: number[][];
  /** Principal key (see subjects.ts) → rules whose src / dst names it. */
  keySrcRules: Map<string, number[]>;
  keyDstRules: Map<string, number[]>;
  /** Rules whose src / dst holds `*`. */
  allSrcRules: number[];
  allDstRules: number[];
  /** Rules with autogroup:self in dst and an address prefix in src. */
  selfPrefixRules: number[];
  /** Rules with autogroup:self in dst (what opens a user's device to its owner's others). */
  selfDstRules: number[];
  /** The same two for `ssh` rules: principal key → rules whose dst names it; with autogroup:self. */
  keySshDstRules: Map<string, number[]>;
  selfSshDstRules: number[];
  /**
   * Principal keys of identities, made once per policy: login → its `u:` key (when some selector
   * names the user) and the `g:` keys of its groups; tag → its `t:` key. Identities the policy
   * never names get no key, which cannot change any match.
   */
  readonly userKeys: Map<string, string[]>;
  readonly tagKeys: Map<string, string>;
}

export interface CompiledPolicy {
  readonly groups: ReadonlyMap<string, readonly string[]>;
  /** Login → the groups that list it. */
  readonly userGroups: ReadonlyMap<string, readonly string[]>;
  readonly tagOwners: ReadonlyMap<string, readonly Selector[]>;
  readonly hosts: ReadonlyMap<string, Prefix>;
  readonly rules: readonly CompiledRule[];
  readonly autoApprovers: AutoApprovers;
  readonly ssh: readonly SshRule[];
  readonly index: RuleIndex;
}

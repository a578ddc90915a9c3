// A parsed policy cut into pieces of bounded size, and put back together. A worker thread reads
// the policy; the thread that serves netmaps needs what it read. Copied across in one message,
// a 1 MiB policy's objects take that thread 100 ms and more to receive in one go; in pieces it
// receives them a few milliseconds at a time, between other requests.

import type { Prefix } from './cidr.js';
import { destination, parsedRule } from './rule-objects.js';
import type { AppCapabilities, CompiledDst, ParsedPolicy, Selector, SshRule } from './types.js';

/**
 * One step of rebuilding. Lists too long for one piece are split over several steps that
 * append to the same entry; `rule` and `route` start a new entry that the next `src`, `dst` or
 * `approvers` steps append to.
 */
export type PieceStep =
  | ['group', string, string[]]
  | ['tagOwner', string, Selector[]]
  | ['hosts', Array<[string, Prefix]>]
  /** A rule's line, and a grant's `app` capabilities (a few names: they travel whole). */
  | ['rule', number, AppCapabilities?]
  | ['src', Selector[]]
  | ['dst', CompiledDst[]]
  | ['route', Prefix]
  | ['approvers', Selector[]]
  | ['exitNode', Selector[]]
  | ['ssh', SshRule];

export type ParsedPiece = PieceStep[];

/** Cuts `parsed` into pieces of about `units` list items each (an item: a login, selector, host…). */
export function parsedPieces(parsed: ParsedPolicy, units: number): ParsedPiece[] {
  const pieces: ParsedPiece[] = [];
  let piece: ParsedPiece = [];
  let size = 0;
  const add = (step: PieceStep, items: number) => {
    if (size > 0 && size + items > units) {
      pieces.push(piece);
      piece = [];
      size = 0;
    }
    piece.push(step);
    size += items + 1;
  };
  /** `list` in parts of at most `units` items, each added as `step(part)`; an empty list once. */
  const addList = <T>(list: T[], step: (part: T[]) => PieceStep) => {
    if (list.length === 0) add(step([]), 0);
    for (let i = 0; i < list.length; i += units) {
      const part = list.slice(i, i + units);
      add(step(part), part.length);
    }
  };

  for (const [name, logins] of parsed.groups) addList(logins, (part) => ['group', name, part]);
  for (const [tag, owners] of parsed.tagOwners) addList(owners, (part) => ['tagOwner', tag, part]);
  addList([...parsed.hosts], (part) => ['hosts', part]);
  for (const rule of parsed.rules) {
    add(rule.app ? ['rule', rule.line, rule.app] : ['rule', rule.line], 0);
    addList(rule.src, (part) => ['src', part]);
    addList(rule.dst, (part) => ['dst', part]);
  }
  for (const route of parsed.autoApprovers.routes) {
    add(['route', route.prefix], 1);
    addList(route.approvers, (part) => ['approvers', part]);
  }
  addList(parsed.autoApprovers.exitNode, (part) => ['exitNode', part]);
  // An ssh rule travels whole: its lists are a few identities, not thousands of logins.
  for (const rule of parsed.ssh) add(['ssh', rule], rule.src.length + rule.dst.length);
  if (piece.length > 0) pieces.push(piece);
  return pieces;
}

/** Rebuilds a parsed policy from its pieces, given in order (parsedPieces). */
export class ParsedPolicyBuilder {
  private readonly parsed: ParsedPolicy = {
    groups: new Map(),
    tagOwners: new Map(),
    hosts: new Map(),
    rules: [],
    autoApprovers: { routes: [], exitNode: [] },
    ssh: [],
  };

  add(piece: ParsedPiece): void {
    const { groups, tagOwners, hosts, rules, autoApprovers } = this.parsed;
    for (const step of piece) {
      switch (step[0]) {
        case 'group':
          appendTo(groups, step[1], step[2]);
          break;
        case 'tagOwner':
          appendTo(tagOwners, step[1], step[2]);
          break;
        case 'hosts':
          for (const [name, prefix] of step[1]) hosts.set(name, prefix);
          break;
        case 'rule':
          // Built as the parser builds them (rule-objects.ts), so that both share hidden classes.
          rules.push(parsedRule(step[1], [], [], step[2]));
          break;
        case 'src':
          appendAll(last(rules).src, step[1]);
          break;
        case 'dst': {
          // Deserialised objects take other classes than literals: each entry is made anew.
          const dst = last(rules).dst;
          for (const d of step[1]) dst.push(destination(d.sel, d.ports, d.protos));
          break;
        }
        case 'route':
          autoApprovers.routes.push({ prefix: step[1], approvers: [] });
          break;
        case 'approvers':
          appendAll(last(autoApprovers.routes).approvers, step[1]);
          break;
        case 'exitNode':
          appendAll(autoApprovers.exitNode, step[1]);
          break;
        case 'ssh':
          this.parsed.ssh.push(step[1]);
          break;
      }
    }
  }

  get result(): ParsedPolicy {
    return this.parsed;
  }
}

function appendTo<T>(map: Map<string, T[]>, key: string, items: T[]): void {
  const list = map.get(key);
  if (list) appendAll(list, items);
  else map.set(key, items);
}

/** Appends one by one: spreading a long list into push() would overflow the call stack. */
function appendAll<T>(list: T[], items: readonly T[]): void {
  for (const item of items) list.push(item);
}

function last<T>(list: T[]): T {
  const item = list[list.length - 1];
  if (item === undefined) throw new Error('a policy piece continues an entry that was never started');
  return item;
}

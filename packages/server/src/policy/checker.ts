// Collects validation errors at parse-tree nodes and checks JSON shapes. Validation never stops
// at the first problem: each helper reports and returns what it could still use.

import type { Node } from 'jsonc-parser';
import { type LineIndex, properties } from './hujson.js';
import type { PolicyError } from './types.js';

export interface StringItem {
  value: string;
  node: Node;
}

export class Checker {
  readonly errors: PolicyError[] = [];

  constructor(readonly lines: LineIndex) {}

  /** Records an error at the node's first character (its opening quote, brace or bracket). */
  error(node: Node, msg: string): void {
    this.errors.push(this.lines.error(node.offset, msg));
  }

  line(node: Node): number {
    return this.lines.position(node.offset).line;
  }

  object(node: Node, what: string): ReturnType<typeof properties> | null {
    if (node.type === 'object') return properties(node);
    this.error(node, `${what} must be an object`);
    return null;
  }

  string(node: Node, what: string): string | null {
    if (node.type === 'string') return node.value as string;
    this.error(node, `${what} must be a string`);
    return null;
  }

  /** The string elements of an array; a non-array or a non-string element is reported. */
  strings(node: Node, what: string): StringItem[] {
    if (node.type !== 'array') {
      this.error(node, `${what} must be an array of strings`);
      return [];
    }
    const out: StringItem[] = [];
    for (const child of node.children ?? []) {
      if (child.type === 'string') out.push({ value: child.value as string, node: child });
      else this.error(child, `${what} must hold only strings`);
    }
    return out;
  }

  /**
   * The fields of an object whose allowed keys are known; unknown keys are reported at the key.
   * Returns field name → value node (the last one when a key repeats; duplicates are reported by
   * the parser). A key names its field in any letter case (`"Action"`, `"SRC"`), as Tailscale
   * reads its policy with Go's JSON, which matches keys to fields that way; two keys naming one
   * field (`"src"` and `"Src"`, or `"src"` and its older spelling `"users"`) are refused, since
   * which one Tailscale would keep is not written anywhere a user can see. A known field set to
   * `null` is absent, as Tailscale reads it (Go's JSON leaves a null field at its zero value) and
   * as Terraform's jsonencode writes an unset optional attribute. `known` names fields of
   * Tailscale's policy that Warren reads under another name (an older spelling: `for`) or does not
   * read at all (`msg`, reported at the key instead of "unknown").
   */
  fields(
    node: Node,
    what: string,
    allowed: readonly string[],
    known: Readonly<Record<string, KnownField>> = {},
  ): Map<string, Node> | null {
    const props = this.object(node, what);
    if (!props) return null;
    const out = new Map<string, Node>();
    const spelledBy = new Map<string, string>();
    for (const { key, keyNode, value } of props) {
      const allowedName = nameSpelled(key, allowed);
      const knownName = allowedName === undefined ? nameSpelled(key, Object.keys(known)) : undefined;
      const field = knownName === undefined ? undefined : known[knownName];
      const name = allowedName ?? field?.for;
      if (name === undefined) {
        if (field?.msg) this.error(keyNode, field.msg);
        else {
          this.error(
            keyNode,
            `unknown field "${key}" in ${what} (expected ${allowed.map((a) => `"${a}"`).join(', ')})`,
          );
        }
        continue;
      }
      const earlier = spelledBy.get(name);
      if (earlier !== undefined && earlier !== key) {
        this.error(keyNode, `"${key}" and "${earlier}" both give "${name}" in ${what}: write it once, as "${name}"`);
        continue;
      }
      spelledBy.set(name, key);
      if (value.type !== 'null') out.set(name, value);
      else out.delete(name);
    }
    return out;
  }
}

/**
 * The name among `names` that a key spells, letter case aside (exact first): Tailscale's policy
 * is read by Go's encoding/json, which matches a key to a field that way, so files written for
 * it carry `"ACLs"`, `"Action"`, `"TagOwners"` (its early documentation did) and its older Go
 * client sends `"tagowners"`.
 */
export function nameSpelled(key: string, names: readonly string[]): string | undefined {
  if (names.includes(key)) return key;
  const lower = key.toLowerCase();
  return names.find((name) => name.toLowerCase() === lower);
}

/** An absent-equivalent value: `null`, `[]` or `{}`. */
export function isEmptyValue(node: Node): boolean {
  return node.type === 'null' || ((node.type === 'array' || node.type === 'object') && !node.children?.length);
}

/**
 * A field of Tailscale's policy that is not one of Warren's names for it: either an older
 * spelling, read as the field it stands for, or a field Warren does not read, refused saying why.
 */
export type KnownField = { for: string; msg?: undefined } | { msg: string; for?: undefined };

/**
 * Tailscale's older spelling of a field (a rule's `users` and `ports`, a test's `user` and
 * `allow`), which Tailscale still reads and its older Go client still sends: read as the field.
 */
export function olderSpelling(current: string): KnownField {
  return { for: current };
}

/** Device posture, which every section that can hold it refuses the same way. */
export const POSTURE_UNSUPPORTED =
  'device posture is not supported: Warren collects no posture (OS, version, MDM state) from devices, so no access can depend on it';

export const POSTURE_FIELD: KnownField = { msg: `"srcPosture": ${POSTURE_UNSUPPORTED}; remove it` };

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
   * the parser). A known field set to `null` is absent, as Tailscale reads it (Go's JSON leaves a null
   * field at its zero value) and as Terraform's jsonencode writes an unset optional attribute.
   * `known` names fields of Tailscale's policy that Warren does not read, each with
   * why: the key is reported with that reason instead of as unknown, and an older spelling of a
   * field (`for`) still stands for it, so the rule is not also reported as missing it.
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
    for (const { key, keyNode, value } of props) {
      if (allowed.includes(key)) {
        if (value.type !== 'null') out.set(key, value);
      } else if (Object.hasOwn(known, key)) {
        const field = known[key];
        this.error(keyNode, field.msg);
        if (field.for && !out.has(field.for)) out.set(field.for, value);
      } else
        this.error(keyNode, `unknown field "${key}" in ${what} (expected ${allowed.map((a) => `"${a}"`).join(', ')})`);
    }
    return out;
  }
}

/** An absent-equivalent value: `null`, `[]` or `{}`. */
export function isEmptyValue(node: Node): boolean {
  return node.type === 'null' || ((node.type === 'array' || node.type === 'object') && !node.children?.length);
}

/** A field of Tailscale's policy that Warren does not read: why, and the field it spells, if any. */
export interface KnownField {
  msg: string;
  for?: string;
}

/** Tailscale's older spelling of a field, refused with a pointer to the current one. */
export function olderSpelling(older: string, current: string): KnownField {
  return {
    msg: `"${older}" is Tailscale's older spelling of "${current}", which Warren does not read: write "${current}"`,
    for: current,
  };
}

/** Device posture, which every section that can hold it refuses the same way. */
export const POSTURE_UNSUPPORTED =
  'device posture is not supported: Warren collects no posture (OS, version, MDM state) from devices, so no access can depend on it';

export const POSTURE_FIELD: KnownField = { msg: `"srcPosture": ${POSTURE_UNSUPPORTED}; remove it` };

// Shared helpers for the policy tests.

import { expect } from 'vitest';
import { type PolicyDevice, type PolicyError, validatePolicy } from '../../src/policy/index.js';

/** Line and column (1-based) of the `nth` occurrence of `token` in `text`. */
export function pos(text: string, token: string, nth = 1, from = ''): { line: number; column: number } {
  let at = from ? text.indexOf(from) - 1 : -1;
  for (let i = 0; i < nth; i++) {
    at = text.indexOf(token, at + 1);
    if (at < 0) throw new Error(`token ${token} (#${nth}) not in text`);
  }
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  return { line, column: at - before.lastIndexOf('\n') };
}

export function errorsOf(text: string): PolicyError[] {
  const r = validatePolicy(text);
  expect(r.ok).toBe(false);
  return r.errors;
}

/**
 * Asserts that exactly one error sits at the `nth` occurrence of `token` (counted from the first
 * occurrence of `from`, when given) and that its message contains `fragment`.
 */
export function expectErrorAt(
  errors: PolicyError[],
  text: string,
  token: string,
  fragment: string,
  nth = 1,
  from = '',
): void {
  const { line, column } = pos(text, token, nth, from);
  const here = errors.filter((e) => e.line === line && e.column === column);
  expect(here, `errors at ${line}:${column}, all: ${JSON.stringify(errors)}`).toHaveLength(1);
  expect(here[0].msg).toContain(fragment);
}

/** Wraps sections into a policy document, one section per line block. */
export function policy(sections: Record<string, string>): string {
  const body = Object.entries(sections).map(([k, v]) => `  "${k}": ${v},`);
  return `{\n${body.join('\n')}\n}\n`;
}

/** A device of a hand-made network: number n gives it 100.64.0.n and fd7a:115c:a1e0::n. */
export const dev = (
  id: string,
  user: string | null,
  tags: string[],
  n: number,
  routes: string[] = [],
): PolicyDevice => ({
  id,
  user,
  tags,
  addresses: [`100.64.0.${n}`, `fd7a:115c:a1e0::${n}`],
  routes,
});

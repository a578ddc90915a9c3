// The one construction of a parsed rule and of its destinations, shared by the parser
// (validate-rules.ts, validate-grants.ts) and by the thread that rebuilds a policy from a
// worker's pieces (parsed-pieces.ts). V8 gives an object the hidden class of how it was made:
// objects read by `v8.deserialize`, or literals with a field left out or spread in, take other
// classes than these literals. Code compiled for one class is deoptimised when it meets another
// (compileSteps at `r.dst`, at every policy change), so every rule and every destination is this
// literal, each field always present and in this order.

import type { PortRanges } from './ports.js';
import type { ProtoSet } from './protocols.js';
import type { AppCapabilities, CompiledDst, ParsedPolicy, Selector } from './types.js';

export type ParsedRule = ParsedPolicy['rules'][number];

/** A rule or grant as parsed; `app` is present (undefined without one) on every rule. */
export function parsedRule(
  line: number,
  src: Selector[],
  dst: CompiledDst[],
  app: AppCapabilities | undefined,
): ParsedRule {
  return { line, src, dst, app };
}

/** One destination of a rule. */
export function destination(sel: Selector, ports: PortRanges, protos: ProtoSet): CompiledDst {
  return { sel, ports, protos };
}

/**
 * How a policy read by a worker (policy.worker.ts) reaches the thread that stores it and serves
 * netmaps from it, without holding that thread for long. The worker cuts what it read into
 * pieces of bounded size and serialises each (so the message that carries them holds bytes,
 * not objects, and arrives at once); this thread deserialises the pieces and builds the indexes
 * a slice at a time (lib/slices.ts), answering other requests between slices. The worker also
 * sends the sorted order of the policy's prefixes, the one step of indexing that cannot pause.
 */
import { deserialize, serialize } from 'node:v8';
import { runInSlices } from '../../lib/slices.js';
import {
  type CompiledPolicy,
  compileSteps,
  hujsonValue,
  type ParsedPiece,
  type ParsedPolicy,
  ParsedPolicyBuilder,
  parsedPieces,
} from '../../policy/index.js';

/** A valid policy as a worker read it, ready to cross to another thread. */
export interface PreparedPolicy {
  /** The parsed policy in pieces (parsed-pieces.ts), each serialised. */
  pieces: Uint8Array[];
  /** PrefixTree.sortedOrder() of the compiled policy. */
  prefixOrder: Int32Array;
  /** The document as JSON text, comments and layout dropped (policy-cache.ts). */
  meaning: string;
}

/** Items (logins, selectors, hosts…) per piece: a few milliseconds to deserialise at most. */
const PIECE_UNITS = 1_000;

/** On the worker: what a thread storing the policy needs from a successful validation. */
export function preparePolicyTransfer(
  text: string,
  parsed: ParsedPolicy,
  compiled: CompiledPolicy,
  units = PIECE_UNITS,
): PreparedPolicy {
  return {
    pieces: parsedPieces(parsed, units).map((piece) => serialize(piece)),
    prefixOrder: compiled.index.prefixTree.sortedOrder(),
    meaning: JSON.stringify(hujsonValue(text)),
  };
}

/** On the receiving thread: the compiled policy, built a slice at a time. */
export function compileTransferred(prepared: PreparedPolicy, sliceMs?: number): Promise<CompiledPolicy> {
  return runInSlices(transferredSteps(prepared), sliceMs);
}

function* transferredSteps(prepared: PreparedPolicy): Generator<void, CompiledPolicy> {
  const builder = new ParsedPolicyBuilder();
  for (const piece of prepared.pieces) {
    builder.add(deserialize(piece) as ParsedPiece);
    yield;
  }
  return yield* compileSteps(builder.result, { identities: true, prefixOrder: prepared.prefixOrder });
}

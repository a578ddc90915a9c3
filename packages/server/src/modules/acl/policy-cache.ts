/**
 * The compiled current policy of a network, cached in this process.
 *
 * Compiling a policy (validation, indexes, its own tests) is far more work than the query that
 * says which version is current, so every caller reads the current version and ETag from the
 * database — other instances may have replaced the policy — and recompiles only when they
 * differ from the cached entry. The ETag is a digest of the text, so an entry can never serve
 * the wrong text. Concurrent misses for one text share a single compilation.
 *
 * A policy this process did not store itself (found after a restart, or stored by another
 * instance on PostgreSQL) is compiled as a stored one is: read in a worker of the policy pool,
 * its indexes built here a slice at a time (policy-transfer.ts), so a large policy never holds
 * the event loop that serves every network. Only a small text, or one read without a pool (a
 * command using the services directly), is compiled in place.
 */
import { ApiError } from '../../core/errors.js';
import { type CompiledPolicy, compilePolicy, hujsonValue } from '../../policy/index.js';
import type { ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { type PolicyHead, policyHead, policyVersion } from './acl.repository.js';
import type { PolicyPool } from './policy-pool.js';
import { compileTransferred } from './policy-transfer.js';

export interface CurrentPolicy extends PolicyHead {
  text: string;
  compiled: CompiledPolicy;
  /**
   * The document as JSON text, comments and layout dropped: what GET /v1/acl returns, and what
   * two texts of the same meaning share. Made once per version, so that neither an answer nor
   * a netmap's cache check serialises a large document again.
   */
  meaning: string;
}

/** Networks whose policy is kept compiled; the least recently used is dropped past this. */
const MAX_NETWORKS = 256;

interface Entry {
  head: PolicyHead;
  /** Set once compiled. */
  value?: CurrentPolicy;
  /** The load in flight, shared by concurrent readers outside transactions. */
  pending?: Promise<CurrentPolicy>;
}

const cache = new Map<string, Entry>();

/**
 * A stored policy was accepted within the validation budget once, so loading it again is given
 * far more: the budget here only stops a worker that will never answer, and a budget lowered
 * since the policy was stored must not leave a network without its policy. (The budget is the
 * worker's CPU time, so a busy machine costs it nothing until the pool's wall-clock ceiling.)
 */
const LOAD_BUDGET_FACTOR = 20;

/**
 * Texts up to this many characters are compiled in place: a few milliseconds at most, less than one slice
 * of the sliced build and far less than a worker's round trip (or its start, in a fresh
 * process). The default policy and most hand-written ones are below it.
 */
const IN_PLACE_MAX_LENGTH = 4 * 1024;

/** Compilations in flight by ETag (a digest of the text), whoever asked for them. */
const compiling = new Map<string, Promise<Compiled>>();

type Compiled = { compiled: CompiledPolicy; meaning: string };

/**
 * The pools of the servers running in this process, newest last. The cache is the process's,
 * so the pool it compiles with is too: any running server's will do.
 */
const pools: PolicyPool[] = [];

/** Compiles policies loaded from the database with `pool`, until the returned function is called. */
export function compileLoadedPoliciesWith(pool: PolicyPool): () => void {
  pools.push(pool);
  return () => {
    const at = pools.indexOf(pool);
    if (at >= 0) pools.splice(at, 1);
  };
}

/** `compiled` and `meaning` when made elsewhere (a worker read the text: see acl.service.ts). */
export function preparePolicy(
  head: PolicyHead,
  text: string,
  made: { compiled: CompiledPolicy; meaning: string } | undefined = undefined,
): CurrentPolicy {
  return {
    ...head,
    text,
    compiled: made?.compiled ?? compilePolicy(text),
    meaning: made?.meaning ?? JSON.stringify(hujsonValue(text)),
  };
}

/**
 * The policy's meaning as text: its document as plain JSON, without comments or layout. Two
 * texts with the same key compile to the same rules.
 */
export const meaningKey = (policy: CurrentPolicy): string => policy.meaning;

/** Records a policy compiled elsewhere (a successful PUT) so the next reader need not compile it. */
export function rememberPolicy(networkId: string, policy: CurrentPolicy): void {
  store(networkId, { head: { version: policy.version, etag: policy.etag }, value: policy });
}

/**
 * The current policy of a network: one indexed query, plus the text and a compilation on a miss.
 * With the caller's read stamp the head may be the one kept at that stamp (no query).
 */
export async function currentPolicy(db: Db, networkId: string, stamp?: ReadStamp): Promise<CurrentPolicy> {
  const head = await requireHead(db, networkId, stamp);
  const hit = lookup(networkId, head);
  if (hit?.value) return hit.value;
  if (hit?.pending) return hit.pending;
  const pending = load(db, networkId, head);
  const entry: Entry = { head, pending };
  store(networkId, entry);
  try {
    entry.value = await pending;
    return entry.value;
  } catch (error) {
    // A failed load must not stay cached.
    if (cache.get(networkId) === entry) cache.delete(networkId);
    throw error;
  } finally {
    entry.pending = undefined;
  }
}

/**
 * The current policy as seen by a transaction. It never waits on a load started outside the
 * transaction: on SQLite that load would queue for the connection the transaction holds.
 */
export async function policyInTransaction(trx: Db, networkId: string): Promise<CurrentPolicy> {
  const head = await requireHead(trx, networkId);
  const hit = lookup(networkId, head);
  if (hit?.value) return hit.value;
  const value = await load(trx, networkId, head);
  store(networkId, { head, value });
  return value;
}

async function requireHead(db: Db, networkId: string, stamp?: ReadStamp): Promise<PolicyHead> {
  const head = await policyHead(db, networkId, stamp);
  if (!head) throw new Error(`network ${networkId} has no policy`);
  return head;
}

async function load(db: Db, networkId: string, head: PolicyHead): Promise<CurrentPolicy> {
  const row = await policyVersion(db, networkId, head.version);
  if (!row) throw new Error(`policy version ${head.version} of network ${networkId} is missing`);
  const pool = pools.at(-1);
  if (!pool || row.text.length <= IN_PLACE_MAX_LENGTH) return preparePolicy(head, row.text);
  let made = compiling.get(head.etag);
  if (!made) {
    made = compileOffThread(pool, row.text);
    compiling.set(head.etag, made);
    const done = made;
    const forget = () => {
      if (compiling.get(head.etag) === done) compiling.delete(head.etag);
    };
    done.then(forget, forget);
  }
  return preparePolicy(head, row.text, await made);
}

async function compileOffThread(pool: PolicyPool, text: string): Promise<Compiled> {
  const budgetMs = pool.budgetMs * LOAD_BUDGET_FACTOR;
  let result: Awaited<ReturnType<PolicyPool['prepare']>>;
  try {
    result = await pool.prepare(text, { budgetMs });
  } catch (error) {
    // Over the budget, out of memory, the worker gone or the server closing: the policy exists
    // but cannot be served now. The caller did nothing wrong, and a later call tries again.
    const why = error instanceof ApiError ? `over ${budgetMs} ms or the memory limit` : (error as Error).message;
    throw new ApiError(
      'unavailable',
      `the network's policy could not be compiled (${why}); try again shortly, and if this persists ask the operator to raise WARREN_POLICY_TIME_BUDGET_MS`,
      {},
      { 'Retry-After': '5' },
    );
  }
  // Stored only once valid, so this is a rule that changed since: the server's fault.
  if (!result.valid || !result.prepared) {
    throw new Error(`a stored policy no longer validates: ${result.errors[0]?.msg ?? 'no detail'}`);
  }
  const { prepared } = result;
  return { compiled: await compileTransferred(prepared), meaning: prepared.meaning };
}

function lookup(networkId: string, head: PolicyHead): Entry | undefined {
  const hit = cache.get(networkId);
  if (!hit || hit.head.version !== head.version || hit.head.etag !== head.etag) return undefined;
  // Refresh its place in the LRU order.
  cache.delete(networkId);
  cache.set(networkId, hit);
  return hit;
}

function store(networkId: string, entry: Entry): void {
  const current = cache.get(networkId);
  // Never replace a newer version with an older one (a slow reader finishing late).
  if (current && current.head.version > entry.head.version) return;
  cache.delete(networkId);
  cache.set(networkId, entry);
  if (cache.size > MAX_NETWORKS) cache.delete(cache.keys().next().value as string);
}

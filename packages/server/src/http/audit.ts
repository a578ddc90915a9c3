/**
 * The audit log. A call that changes state writes its entry inside the transaction of the
 * change (core/unit-of-work.ts); every other call — reads, 4xx, 401, 429, 5xx — is queued and
 * written in batches, so the audit write never sits on the path of a read.
 */
import type { FastifyRequest } from 'fastify';
import type { AuditRow } from '../core/audit-entries.js';
import { insertAuditEntries } from '../core/audit-entries.js';
import type { AuditQueue } from '../core/context.js';
import { callPath } from '../edge/actor.js';
import { clientAddress } from '../edge/client-address.js';
import { addKeyUses } from '../modules/keys/keys.repository.js';
import type { Db } from '../storage/database.js';

const FLUSH_DELAY_MS = 50;
const FLUSH_BATCH = 500;
/**
 * An API key's `uses` and `lastUsed` are written at most once per this interval per key and
 * server (docs/API.md: they trail its calls by up to a minute). Their write moves the network's
 * read stamp (migration 033); written with every batch, a busy key would move it 20 times a
 * second and nothing kept per stamp would be served twice.
 */
const KEY_USE_INTERVAL_MS = 60_000;

interface KeyUse {
  at: number;
  count: number;
}

export interface ChangeRecord {
  action: string;
  target: string | null;
  status: number;
}

/** What an entry says of any call, even one refused before it reached a route. */
export interface CallFacts {
  method: string;
  /** The request target as sent, without its query string. */
  target: string;
  status: number;
  clientAddr: string;
  requestId: string;
  time: number;
}

/** The entry of a call of no network and no key (refused before anyone was identified). */
export function anonymousRow(call: CallFacts): AuditRow {
  return {
    network_id: null,
    time: call.time,
    key_id: null,
    key_name: null,
    device_id: null,
    method: call.method.slice(0, 32),
    path: callPath(call.target),
    status: call.status,
    client_addr: call.clientAddr,
    request_id: call.requestId,
    action: null,
    target: null,
  };
}

export function auditRow(
  request: FastifyRequest,
  status: number,
  time: number,
  change?: Omit<ChangeRecord, 'status'>,
): AuditRow {
  // Written out rather than spread from anonymousRow: this runs on every call.
  return {
    time,
    method: request.method.slice(0, 32),
    path: callPath(request.url),
    status,
    client_addr: clientAddress(request),
    request_id: request.id,
    // `?? null`: requests Fastify builds for errors found before routing lack the decorations.
    network_id: request.networkId ?? null,
    key_id: request.principal?.keyId ?? request.refusedKey?.keyId ?? null,
    // A console session is named by its person, never as a key.
    key_name: request.principal?.keyId ? request.principal.keyName : (request.refusedKey?.keyName ?? null),
    user_id: request.principal?.user?.id ?? null,
    user_login: request.principal?.user?.loginName ?? null,
    device_id: request.device?.deviceId ?? null,
    action: change?.action ?? null,
    target: change?.target ?? null,
  };
}

/** Moves the rows of `networkId` from `from` to the end of `to`, each list keeping its order. */
function moveRowsOf(from: AuditRow[], networkId: string, to: AuditRow[]): void {
  let kept = 0;
  for (const row of from) {
    if (row.network_id === networkId) to.push(row);
    else from[kept++] = row;
  }
  from.length = kept;
}

export class AuditLog implements AuditQueue {
  private queue: AuditRow[] = [];
  /** Uses not written yet, per key: those of a key written less than an interval ago wait. */
  private keyUse = new Map<string, KeyUse>();
  /** Keys whose uses were written less than an interval ago, each with the timer that ends it. */
  private keysWritten = new Map<string, NodeJS.Timeout>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  /** The write that follows the one in flight, shared by every caller of `settled()` meanwhile. */
  private nextWrite: Promise<void> | undefined;
  /** Batches asked for whose write has not begun: a change may still take its network's rows. */
  private waiting: AuditRow[][] = [];
  /** Writes of rows a change took for its network (`recordNetwork`), until they commit. */
  private taken = new Set<Promise<void>>();
  /** The networks whose rows the batch write in flight holds, and its end. */
  private inFlight: { networks: Set<string | null | undefined>; done: Promise<void> } | undefined;

  /** `batch`: the queue's length at which it is written without waiting for the timer. */
  constructor(
    private readonly db: Db,
    private readonly options: { batch?: number } = {},
  ) {}

  enqueue(row: AuditRow): void {
    this.queue.push(row);
    this.schedule();
  }

  /**
   * API keys' `uses` and `lastUsed` are counted here and written with the next batch, or, for a
   * key written less than an interval ago, with the first batch after the interval ends.
   */
  noteKeyUse(keyId: string, at: number): void {
    const seen = this.keyUse.get(keyId);
    if (seen) {
      seen.at = at;
      seen.count++;
    } else this.keyUse.set(keyId, { at, count: 1 });
    if (!this.keysWritten.has(keyId)) this.schedule();
  }

  /** The uses to write now (every one, on close), leaving those of keys written too recently. */
  private dueKeyUses(all: boolean): Map<string, KeyUse> {
    const due = new Map<string, KeyUse>();
    for (const [keyId, use] of this.keyUse) {
      if (!all && this.keysWritten.has(keyId)) continue;
      due.set(keyId, use);
      this.keyUse.delete(keyId);
      if (all) continue;
      const timer = setTimeout(() => {
        this.keysWritten.delete(keyId);
        if (this.keyUse.has(keyId)) this.schedule();
      }, KEY_USE_INTERVAL_MS);
      timer.unref();
      this.keysWritten.set(keyId, timer);
    }
    return due;
  }

  private schedule(): void {
    if (this.queue.length >= (this.options.batch ?? FLUSH_BATCH)) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
  }

  /**
   * Writes every entry queued so far and the key uses that are due (all of them when `all`);
   * resolves when it is committed.
   */
  flush(all = false): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const rows = this.queue;
    const uses = this.dueKeyUses(all);
    this.queue = [];
    this.waiting.push(rows);
    this.flushing = this.flushing.then(() => {
      // From here on the batch is this write's alone (recordNetwork takes rows only before).
      this.waiting.splice(this.waiting.indexOf(rows), 1);
      const done = this.write(rows, uses).finally(() => {
        if (this.inFlight?.done === done) this.inFlight = undefined;
      });
      if (rows.length > 0) this.inFlight = { networks: new Set(rows.map((row) => row.network_id)), done };
      return done;
    });
    return this.withTaken(this.flushing);
  }

  /** `done`, and the writes of rows changes took meanwhile: those rows were queued before too. */
  private withTaken(done: Promise<void>): Promise<void> {
    if (this.taken.size === 0) return done;
    return Promise.all([done, ...this.taken]).then(() => undefined);
  }

  /**
   * Resolves once every entry queued before the call is committed, as `flush()`, but callers
   * that arrive while a write is in flight share the one write that follows it. A log reader
   * must see the entries of its own earlier calls; when each of 32 concurrent readers wrote the
   * entries queued since the last one, the reads queued behind as many small transactions.
   */
  settled(): Promise<void> {
    if (this.queue.length === 0) return this.withTaken(this.flushing);
    this.nextWrite ??= this.flushing.then(() => {
      this.nextWrite = undefined;
      return this.flush();
    });
    return this.withTaken(this.nextWrite);
  }

  /**
   * Writes now the entries of one network that wait, in the queue or in a batch whose write has
   * not begun (behind a slow one), leaving every other network's where they are, and waits for
   * the batch in flight when it holds some of them: a change of one network is numbered after
   * its own earlier calls. It waits for another network's audit lock only through a batch that
   * holds rows of both, as that batch's other readers do.
   */
  recordNetwork(networkId: string): Promise<void> {
    const rows: AuditRow[] = [];
    for (const batch of this.waiting) moveRowsOf(batch, networkId, rows);
    moveRowsOf(this.queue, networkId, rows);
    const inFlight = this.inFlight?.networks.has(networkId) ? this.inFlight.done : undefined;
    if (rows.length === 0) return inFlight ?? Promise.resolve();
    // guarded() never rejects, so the write leaves the set however it ends.
    const write = this.guarded(() => this.db.transaction().execute((trx) => insertAuditEntries(trx, rows)));
    this.taken.add(write);
    void write.then(() => this.taken.delete(write));
    return inFlight ? Promise.all([inFlight, write]).then(() => undefined) : write;
  }

  /**
   * Two transactions, never one: a change transaction locks its rows (a key it revokes, say)
   * and takes the `audit` lock last, so a flush that held the `audit` lock while updating key
   * rows could deadlock with it. The key counters are written first, in key order so that two
   * instances flushing at once lock the same rows in the same order.
   */
  private async write(rows: AuditRow[], uses: Map<string, KeyUse>): Promise<void> {
    if (uses.size) await this.guarded(() => this.writeKeyUses(uses));
    if (rows.length) await this.guarded(() => this.db.transaction().execute((trx) => insertAuditEntries(trx, rows)));
  }

  /**
   * In a transaction of their own, never in the one holding the `audit` lock: a change
   * transaction locks its rows (a key it revokes, say) and takes that lock last, so a flush
   * holding it while updating key rows could deadlock with it. Key order makes two instances
   * flushing at once lock the same rows in the same order.
   */
  private async writeKeyUses(uses: Map<string, KeyUse>): Promise<void> {
    const ordered = [...uses].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    await this.db.transaction().execute(async (trx) => {
      for (const [keyId, use] of ordered) await addKeyUses(trx, keyId, use);
    });
  }

  /** The audit log must not take the server down with it; the error is logged by the caller. */
  private async guarded(write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      this.onError?.(error);
    }
  }

  onError?: (error: unknown) => void;

  async close(): Promise<void> {
    for (const timer of this.keysWritten.values()) clearTimeout(timer);
    this.keysWritten.clear();
    await this.flush(true);
  }
}

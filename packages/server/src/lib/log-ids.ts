/**
 * Ids and cursors of the append-only logs. Entries are ordered by one sequence shared by all
 * networks, and that order is what keeps keyset paging exact; but a sequence number handed
 * out as is would let one network count the others' activity between two of its own entries.
 * So the number leaves the server only encrypted: one AES-256 block holding a domain byte,
 * seven zero bytes and the sequence number, under a key kept in the database (shared by
 * every instance). A block is a pseudo-random permutation, so ids show no arithmetic relation
 * to each other or to the count of entries; the zero bytes make a forged or altered cursor
 * fail to decrypt to anything (a chance of 2^-64), and the domain byte keeps an id from being
 * replayed as a cursor, or a cursor of one log as one of the other.
 *
 * ECB mode keeps no state from one block to the next, so one cipher and one decipher made with
 * the key serve every block: each `update` of exactly one block is that block's permutation,
 * the same bytes a cipher made for it alone gives. Making a cipher per id (a key schedule and
 * an OpenSSL context each time) cost 3.3 µs, six times the block itself, and a log page seals
 * one id per entry.
 */
import { type Cipher, createCipheriv, createDecipheriv, type Decipher } from 'node:crypto';
import { ID_PREFIX } from '@warren/contract';
import type { Db } from '../storage/database.js';
import { base32, fromBase32 } from './ids.js';
import { deriveKey, loadServerSecret } from './server-secret.js';

export type LogKind = 'connection' | 'audit' | 'event' | 'delivery';

const DOMAIN = {
  id: { connection: 1, audit: 2, event: 5, delivery: 7 },
  cursor: { connection: 3, audit: 4, event: 6, delivery: 8 },
} as const;

export class LogIds {
  private readonly cipher: Cipher;
  private readonly decipher: Decipher;

  constructor(secret: Buffer) {
    const key = deriveKey(secret, 'warren log ids v1');
    // Padding off: a whole block in gives that block out at once, and nothing is held back.
    this.cipher = createCipheriv('aes-256-ecb', key, null).setAutoPadding(false);
    this.decipher = createDecipheriv('aes-256-ecb', key, null).setAutoPadding(false);
  }

  /** The key of this database's logs, derived from the server secret every instance shares. */
  static async load(db: Db): Promise<LogIds> {
    return new LogIds(await loadServerSecret(db));
  }

  /** `aud_…`/`log_…`: 26 base32 characters that only this server can map back to a sequence number. */
  id(kind: LogKind, seq: number): string {
    return `${ID_PREFIX[kind]}_${base32(this.seal(DOMAIN.id[kind], seq))}`;
  }

  /** The sequence number behind an id of this server, or undefined. */
  idSeq(kind: LogKind, id: string): number | undefined {
    const prefix = `${ID_PREFIX[kind]}_`;
    if (!id.startsWith(prefix)) return undefined;
    const text = id.slice(prefix.length);
    const block = fromBase32(text);
    if (block?.length !== 16 || base32(block) !== text) return undefined;
    return this.open(DOMAIN.id[kind], block);
  }

  /**
   * The last cursor made of each log, by sequence number. A page that reaches the log's end is
   * read anew on every call (modules/logs/kept-pages.ts), and while nothing is appended each of
   * those calls hands out the same cursor: the block sealed again cost 2–4 µs a call.
   */
  private readonly lastCursors = new Map<LogKind, { seq: number; cursor: string }>();

  /** The opaque cursor of a position in a log (base64url, 22 characters). */
  cursor(kind: LogKind, seq: number): string {
    const last = this.lastCursors.get(kind);
    if (last?.seq === seq) return last.cursor;
    const cursor = this.seal(DOMAIN.cursor[kind], seq).toString('base64url');
    this.lastCursors.set(kind, { seq, cursor });
    return cursor;
  }

  /** The position a cursor of this log stands for, or undefined for anything this server did not hand out. */
  cursorSeq(kind: LogKind, cursor: string): number | undefined {
    const block = Buffer.from(cursor, 'base64url');
    // Only the exact text handed out: base64url decoding alone would accept variants.
    if (block.length !== 16 || block.toString('base64url') !== cursor) return undefined;
    return this.open(DOMAIN.cursor[kind], block);
  }

  private seal(domain: number, seq: number): Buffer {
    const block = Buffer.alloc(16);
    block[0] = domain;
    block.writeBigUInt64BE(BigInt(seq), 8);
    return this.cipher.update(block);
  }

  private open(domain: number, sealed: Buffer): number | undefined {
    const block = this.decipher.update(sealed);
    if (block[0] !== domain || block.subarray(1, 8).some((byte) => byte !== 0)) return undefined;
    const seq = block.readBigUInt64BE(8);
    return seq <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(seq) : undefined;
  }
}

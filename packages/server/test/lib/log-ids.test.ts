import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { base32 } from '../../src/lib/ids.js';
import { LogIds } from '../../src/lib/log-ids.js';
import { deriveKey } from '../../src/lib/server-secret.js';

/** One block sealed by a cipher made for it alone: what every id was before the cipher was kept. */
function sealedAlone(secret: Buffer, domain: number, seq: number): Buffer {
  const block = Buffer.alloc(16);
  block[0] = domain;
  block.writeBigUInt64BE(BigInt(seq), 8);
  const cipher = createCipheriv('aes-256-ecb', deriveKey(secret, 'warren log ids v1'), null).setAutoPadding(false);
  return Buffer.concat([cipher.update(block), cipher.final()]);
}

describe('log ids from one kept cipher', () => {
  const secret = randomBytes(32);
  const ids = new LogIds(secret);

  it('are the ids a cipher per block gives, whatever was sealed or opened in between', () => {
    const seqs = [0, 1, 2, 1, 99_999, 2 ** 40, Number.MAX_SAFE_INTEGER];
    for (const seq of seqs) {
      // Interleaved: a failed open, a cursor, an id of another log, then the id compared.
      expect(ids.cursorSeq('audit', randomBytes(16).toString('base64url'))).toBeUndefined();
      expect(ids.idSeq('audit', `aud_${base32(randomBytes(16))}`)).toBeUndefined();
      ids.cursor('event', seq);
      expect(ids.id('audit', seq)).toBe(`aud_${base32(sealedAlone(secret, 2, seq))}`);
      expect(ids.id('connection', seq)).toBe(`log_${base32(sealedAlone(secret, 1, seq))}`);
      expect(ids.cursor('audit', seq)).toBe(sealedAlone(secret, 4, seq).toString('base64url'));
    }
  });

  it("give a log's last cursor again only for the same log and position", () => {
    const logs = [
      ['audit', 4],
      ['event', 6],
      ['connection', 3],
      ['delivery', 8],
    ] as const;
    // Each log's cursor of a position asked twice in a row (the second remembered), then every
    // log's again, then the next position: each must be what a cipher per block gives.
    for (const seq of [5, 5, 6, 5, 0, 0, 2 ** 40]) {
      for (let round = 0; round < 2; round++) {
        for (const [kind, domain] of logs) {
          const expected = sealedAlone(secret, domain, seq).toString('base64url');
          expect(ids.cursor(kind, seq)).toBe(expected);
          expect(ids.cursor(kind, seq)).toBe(expected);
        }
      }
      for (const [kind, domain] of logs) {
        expect(ids.cursor(kind, seq + 1)).toBe(sealedAlone(secret, domain, seq + 1).toString('base64url'));
      }
    }
  });

  it('open what they sealed and nothing else, in any order', () => {
    const issued = Array.from({ length: 200 }, (_, i) => ({ seq: i * 7919, id: ids.id('event', i * 7919) }));
    const cursors = issued.map(({ seq }) => ({ seq, cursor: ids.cursor('delivery', seq) }));
    for (const { seq, id } of issued.reverse()) expect(ids.idSeq('event', id)).toBe(seq);
    for (const { seq, cursor } of cursors) expect(ids.cursorSeq('delivery', cursor)).toBe(seq);
    expect(ids.idSeq('audit', issued[0]!.id.replace(/^evt_/, 'aud_'))).toBeUndefined();
    expect(ids.cursorSeq('audit', cursors[0]!.cursor)).toBeUndefined();
    expect(new LogIds(randomBytes(32)).idSeq('event', issued[0]!.id)).toBeUndefined();
  });
});

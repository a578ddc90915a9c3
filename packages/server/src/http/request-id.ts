/** Request ids: echo a client's `X-Request-Id` when it is a sane token, else make one. */
import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SANE = /^[A-Za-z0-9._:@-]{1,128}$/;

/**
 * Ids are drawn from a pool of random bytes refilled 4 KiB at a time: one call into the
 * system's generator per 341 requests instead of one per request.
 */
const ID_BYTES = 12;
const pool = Buffer.alloc(ID_BYTES * 341);
let used = pool.length;

export function newRequestId(): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += ID_BYTES;
  return `req_${pool.toString('hex', used - ID_BYTES, used)}`;
}

export function requestIdFrom(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && SANE.test(given)) return given;
  return newRequestId();
}

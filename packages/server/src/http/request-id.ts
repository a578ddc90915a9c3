/** Request ids: echo a client's `X-Request-Id` when it is a sane token, else make one. */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SANE = /^[A-Za-z0-9._:@-]{1,128}$/;

export function newRequestId(): string {
  return `req_${randomBytes(12).toString('hex')}`;
}

export function requestIdFrom(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && SANE.test(given)) return given;
  return newRequestId();
}

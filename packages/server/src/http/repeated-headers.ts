/**
 * Fields Warren acts on that may appear once (RFC 9110 §5.3: a field that is not a list is
 * never repeated): two `Authorization` or two `Content-Type` lines are 400. Node keeps the
 * first of each and drops the rest, while a proxy in front may keep the last, so the two
 * would judge one request with different credentials or read its body as different types.
 * (Host is judged in host-header.ts, Content-Length by Node's parser.)
 */
import type { FastifyRequest } from 'fastify';
import { invalidRequest } from './problem.js';

const SINGLE = ['authorization', 'content-type'];

export function checkRepeatedHeaders(request: FastifyRequest): void {
  const raw = request.raw.rawHeaders;
  const seen = [false, false];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    // Only names of these lengths can be one of them: the others are not lower-cased.
    if (name.length !== 13 && name.length !== 12) continue;
    const which = SINGLE.indexOf(name.toLowerCase());
    if (which < 0) continue;
    if (seen[which]) {
      throw invalidRequest(`the request has more than one ${name} header: send exactly one (RFC 9110 §5.3)`);
    }
    seen[which] = true;
  }
}

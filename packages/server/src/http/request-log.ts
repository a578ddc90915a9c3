/**
 * One log line per request. Fastify's own request logging writes two (one when the request
 * arrives, one when it is answered) and the first carries the whole URL; at thousands of
 * requests a second the second line is all an operator needs: method, path, status, time and
 * the request id (pino's child logger adds `reqId`). The query string is left out: a
 * sign-in callback carries its authorization code there, and nothing that identifies a call
 * needs it. Headers, and so credentials, are never logged, nor a secret sent in the path: the
 * path is the audit log's (edge/actor.ts, callPath).
 */
import type { FastifyInstance } from 'fastify';
import { callPath } from '../edge/actor.js';

export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        path: callPath(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
    done();
  });
}

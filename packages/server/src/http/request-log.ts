/**
 * One log line per request. Fastify's own request logging writes two (one when the request
 * arrives, one when it is answered) and the first carries the whole URL; at thousands of
 * requests a second the second line is all an operator needs: method, path, status, time and
 * the request id (pino's child logger adds `reqId`). The query string is left out: a
 * sign-in callback carries its authorization code there, and nothing that identifies a call
 * needs it. Headers, and so credentials, are never logged.
 */
import type { FastifyInstance } from 'fastify';

export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    const query = request.url.indexOf('?');
    request.log.info(
      {
        method: request.method,
        path: query === -1 ? request.url : request.url.slice(0, query),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
    done();
  });
}

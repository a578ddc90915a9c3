/**
 * Requests Node's HTTP parser refuses before Fastify sees them: headers (request line
 * included) over the size limit (431, or 414 when the request line alone is too long), an
 * HTTP version other than 1.x (505), a method the parser does not know (`FOO /v1/devices`:
 * 405 when the path is served, else 404), a malformed request line or header (400), a
 * request that did not arrive in time (408: headers or body stalled, http/timeouts.ts). The problem response is written on the socket
 * here, which is then closed, and the call is audited. Nothing identifies a caller at this
 * point (headers were not parsed, or not trusted), so the entry belongs to no network — as
 * every unauthenticated call's — and is seen by operators in the database, not through the API.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { STATUS_TITLES } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../core/context.js';
import { socketAddress } from '../edge/client-address.js';
import { anonymousRow } from './audit.js';
import { noRouteError, problemBody } from './error-handler.js';
import { ApiError } from './problem.js';
import { newRequestId } from './request-id.js';
import { MAX_TARGET_LENGTH, targetTooLong, versionNotSupported } from './request-line.js';
import { isTailscaleApiTarget, tailscaleErrorBody } from './tailscale-api/errors.js';

type ClientError = Error & { code?: string; rawPacket?: unknown };

const TOKEN = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}) (\S+)/;

/** Method and target of the request line, when the bytes received so far hold one. */
function requestLine(raw: unknown): { method: string; target: string } {
  const match = Buffer.isBuffer(raw) ? TOKEN.exec(raw.toString('latin1', 0, 8192)) : null;
  return { method: match?.[1] ?? '', target: match?.[2] ?? '' };
}

/** The version a request line names (`HTTP/3.0` → `3.0`), when the bytes hold one. */
function requestVersion(raw: unknown): string | undefined {
  if (!Buffer.isBuffer(raw)) return undefined;
  return /^\S+ \S+ HTTP\/(\d+\.\d+)\r?\n/.exec(raw.toString('latin1', 0, MAX_TARGET_LENGTH + 64))?.[1];
}

/**
 * Whether headers over the limit are a request line over it: the bytes start a request whose
 * line has not ended within MAX_TARGET_LENGTH. (Bytes that are the middle of a long request
 * cannot tell, and are answered as headers too large.)
 */
function targetOverflows(raw: unknown): boolean {
  if (!Buffer.isBuffer(raw)) return false;
  const text = raw.toString('latin1', 0, MAX_TARGET_LENGTH + 64).replace(/^(?:\r\n)+/, '');
  if (!TOKEN.test(text)) return false;
  const end = text.indexOf('\r\n');
  return end < 0 || end > MAX_TARGET_LENGTH;
}

function clientProblem(app: FastifyInstance, error: ClientError, method: string, target: string): ApiError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      if (targetOverflows(error.rawPacket)) return targetTooLong();
      return new ApiError('headers_too_large', 'the request line and headers are larger than the server accepts');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('request_timeout', 'the request did not arrive in time');
    case 'HPE_INVALID_METHOD':
      if (method && target.startsWith('/')) return noRouteError(app, method, target);
      break;
    // The parser stops at `PRI * HTTP/2.0`, the preface of HTTP/2 with prior knowledge.
    case 'HPE_PAUSED_H2_UPGRADE':
      return versionNotSupported('2.0');
    case 'HPE_INVALID_VERSION': {
      const version = requestVersion(error.rawPacket);
      if (version && !version.startsWith('1.')) return versionNotSupported(version);
    }
  }
  return new ApiError('invalid_request', `the request is not valid HTTP/1.1: ${error.message}`);
}

/** The refusal as the API the target names answers one: Tailscale's error body under /api/v2. */
function rawResponse(error: ApiError, requestId: string, target: string): string {
  const tailscale = isTailscaleApiTarget(target);
  const request = { id: requestId };
  const body = JSON.stringify(tailscale ? tailscaleErrorBody(request, error) : problemBody(request, error));
  const headers = {
    'Content-Type': tailscale ? 'application/json; charset=utf-8' : 'application/problem+json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Request-Id': requestId,
    Connection: 'close',
    ...error.headers,
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${error.status} ${STATUS_TITLES[error.status] ?? 'Error'}\r\n${lines.join('')}\r\n${body}`;
}

/** `app` is read when an error arrives, so the handler can be passed to Fastify() itself. */
export function clientErrorHandler(ctx: AppContext, app: () => FastifyInstance) {
  return (error: ClientError, socket: Socket): void => {
    // A reset connection, or one with a response under way (an earlier request of the same
    // connection): writing now would garble that response, and the bytes received may
    // belong to it, so the connection is closed without a word. One exception: a request
    // whose body stopped arriving, or broke its encoding (a malformed chunk), has a response
    // that has not started, which this answer takes the place of.
    const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    const bodyUnderWay = pending != null && !pending.headersSent && pending.req?.complete === false;
    // A connection that never sent a byte made no request: it is closed without an answer or
    // an audit entry (idle connections must not turn into writes to the audit log).
    const silent = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesRead === 0;
    if (error.code === 'ECONNRESET' || silent || socket.destroyed || !socket.writable || (pending && !bodyUnderWay)) {
      socket.destroy();
      return;
    }
    const { method, target } = bodyUnderWay
      ? { method: pending.req.method ?? '', target: pending.req.url ?? '' }
      : requestLine(error.rawPacket);
    const problem = clientProblem(app(), error, method, target);
    const requestId = newRequestId();
    app().log.debug({ err: error, requestId }, 'refused a request the HTTP parser could not read');
    socket.end(rawResponse(problem, requestId, target));
    ctx.audit.enqueue(
      anonymousRow({
        method,
        target,
        status: problem.status,
        clientAddr: socketAddress(socket),
        requestId,
        time: ctx.clock.now(),
      }),
    );
  };
}

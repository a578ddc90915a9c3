/**
 * What a request may ask of the server that it does not do, refused as problems before the
 * body is read instead of being quietly ignored:
 *  - a body in a content coding (`Content-Encoding: gzip`): read as it is, it would be taken
 *    for JSON it is not; 415 `unsupported_media_type`, as RFC 9110 §8.4.1 allows;
 *  - a transfer coding other than `chunked` (`Transfer-Encoding: gzip, chunked`): Node's parser
 *    removes the chunking and nothing else; 501 `not_implemented` (RFC 9112 §6.1);
 *  - an expectation other than `100-continue`: Node would answer 417 itself, with no body and
 *    no request id; 417 `expectation_failed` (RFC 9110 §10.1.1);
 *  - a transfer coding in HTTP/1.0, which has none: 400 and the connection closed.
 * Checked in the pipeline (pipeline.ts) right after Host, whether or not a key is sent (a
 * valid one still has the refused call recorded in its network and counted).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './problem.js';
import { routeOf } from './route-of.js';

/** The comma-separated, lower-cased members of a header (repeated headers joined). */
function members(value: string | string[] | undefined): string[] {
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  return text
    .split(',')
    .map((m) => m.trim().toLowerCase())
    .filter((m) => m !== '');
}

/** Throws the problem of a request asking for a coding or an expectation the server lacks. */
export function checkCodings(request: FastifyRequest): void {
  const problem = refusal(request);
  if (problem) throw problem;
}

function refusal(request: FastifyRequest): ApiError | undefined {
  const { headers } = request;
  // Nearly every call sends none of the three: checked without building their member lists.
  if (headers.expect === undefined && headers['transfer-encoding'] === undefined && !headers['content-encoding']) {
    return undefined;
  }
  // HTTP/1.0 has no transfer codings: a proxy of that version would read the body to the end
  // of the connection, so the framing is faulty whatever Node made of it (RFC 9112 §6.1).
  if (headers['transfer-encoding'] !== undefined && request.raw.httpVersionMinor === 0) {
    return new ApiError(
      'invalid_request',
      'an HTTP/1.0 request cannot carry Transfer-Encoding (RFC 9112 §6.1); send Content-Length',
      {},
      { Connection: 'close' },
    );
  }
  const expectations = members(request.headers.expect);
  if (expectations.some((e) => e !== '100-continue')) {
    return new ApiError(
      'expectation_failed',
      `the server meets no expectation but 100-continue (got "${request.headers.expect}")`,
    );
  }
  const transfer = members(request.headers['transfer-encoding']).filter((t) => t !== 'chunked');
  if (transfer.length > 0) {
    return new ApiError(
      'not_implemented',
      `the server decodes no transfer coding but chunked (got "${transfer.join(', ')}"); send the body as it is`,
    );
  }
  // A route may decode some codings itself (flow log uploads: zstd). Refused whether or not a
  // body follows: a coding the server cannot decode is the client's mistake either way.
  const decoded = routeOf(request).config?.contentCodings ?? [];
  const content = members(request.headers['content-encoding']).filter((c) => c !== 'identity' && !decoded.includes(c));
  if (content.length > 0) {
    return new ApiError(
      'unsupported_media_type',
      `this request's body is not decompressed (Content-Encoding "${content.join(', ')}"); send it uncompressed`,
    );
  }
  return undefined;
}

/**
 * A request with an expectation Node does not know goes to the router like any other, instead
 * of Node's bare 417: the pipeline then answers it (checkCodings).
 */
export function routeUnknownExpectations(app: FastifyInstance): void {
  app.server.on('checkExpectation', (request, response) => app.server.emit('request', request, response));
}

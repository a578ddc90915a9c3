/**
 * Request bodies are JSON; an empty body is no body. Generic HTTP clients send
 * `Content-Type: application/json` (or anything else) on every call, a DELETE or an action
 * POST included, so a declared type with nothing behind it is never a 400 or a 415 — while a
 * body that is really there and is not JSON stays a 415.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, invalidRequest } from '../core/errors.js';
import { routeOf } from './route-of.js';

/**
 * True when a string or a key anywhere in `value`, parsed from the JSON `text`, holds U+0000.
 * No field takes one, and PostgreSQL refuses it in text (the insert failed with a 500). In JSON
 * a NUL can only arrive as the escape \u0000, so the tree is walked only when the text has one.
 */
export function jsonHoldsNul(text: string, value: unknown): boolean {
  return text.includes('\\u0000') && holdsText(value, (s) => s.includes('\0'));
}

/** An escape of a UTF-16 surrogate, `\uD800` to `\uDFFF`: half of a pair, or a lone half. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** In a `u` regular expression a pair is one code point, so only a lone half is of category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * True when a string or a key anywhere in `value` holds half of a UTF-16 pair without the
 * other: it is no character, so no backend stores it as sent (SQLite gave back three U+FFFD,
 * PostgreSQL one). Undecodable bytes already became U+FFFD when the body was read, so a lone
 * half can only arrive as an escape, and the tree is walked only when the text has one.
 */
export function jsonHoldsLoneSurrogate(text: string, value: unknown): boolean {
  return SURROGATE_ESCAPE.test(text) && holdsText(value, (s) => LONE_SURROGATE.test(s));
}

function holdsText(value: unknown, holds: (text: string) => boolean): boolean {
  // A stack, not recursion: a 1 MiB body can nest deeper than the call stack goes.
  const stack = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'string') {
      if (holds(next)) return true;
    } else if (Array.isArray(next)) {
      for (const item of next) stack.push(item);
    } else if (next !== null && typeof next === 'object') {
      for (const [key, inner] of Object.entries(next)) {
        if (holds(key)) return true;
        stack.push(inner);
      }
    }
  }
  return false;
}

/**
 * The key for which the JSON parser refused `text` although it is JSON: `__proto__`, or a
 * `constructor` holding `prototype` (refused unread, so that no body can reach an object's
 * prototype). No body of the API has such a field, so it is named as the unknown field it is.
 */
function forbiddenKeyOf(text: string): string | undefined {
  let found: string | undefined;
  try {
    JSON.parse(text, (key, value) => {
      const reachesPrototype =
        key === '__proto__' ||
        (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value);
      if (reachesPrototype) found ??= key;
      return value;
    });
  } catch {
    return undefined;
  }
  return found;
}

/** True when the request carries no body at all: `Content-Length: 0`, or no length and no chunks. */
function hasNoBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return length === '0' || (length === undefined && request.headers['transfer-encoding'] === undefined);
}

/**
 * A body sent to a call of the API (`/v1`) that takes none: `{}` and `null` are nothing, but a field is
 * an unknown field as in any other body, not silently dropped (an approve sent
 * `{"force": true}` must not look like it was heard). The Tailscale API (`/api/v2`) and SCIM
 * keep their own rules.
 */
export function unexpectedBody(request: FastifyRequest): ApiError | undefined {
  const { body } = request;
  // A GET's body has no meaning (RFC 9110 §9.3.1): ignored, as it always was.
  if (body === undefined || request.method === 'GET' || request.method === 'HEAD') return undefined;
  const route = routeOf(request);
  if (route.schema?.body || !route.url?.startsWith('/v1/')) return undefined;
  // JSON's null is nothing too: some clients encode "no body" so.
  if (body === null) return undefined;
  if (typeof body !== 'object' || Array.isArray(body)) {
    // The path as the documentation writes it (`/v1/routes/{id}/approve`), not the router's `:id`.
    const path = route.url.replace(/:(\w+)/g, '{$1}');
    return invalidRequest(`${request.method} ${path} takes no body; send none, {} or null`);
  }
  const [field] = Object.keys(body);
  return field === undefined ? undefined : new ApiError('unknown_field', `unknown field "${field}" in body`);
}

type StringParser = (
  request: FastifyRequest,
  body: string | Buffer,
  done: (error: Error | null, value?: unknown) => void,
) => void;

/** JSON as the API reads it. A chunked body may still turn out empty: no body, as below. */
function jsonBodyParser(app: FastifyInstance): StringParser {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  return (request, body, done) => {
    if (body === '') return done(null, undefined);
    const text = String(body);
    parseJson(request, text, (error, value) => {
      const forbidden = error ? forbiddenKeyOf(text) : undefined;
      if (forbidden !== undefined) return done(new ApiError('unknown_field', `unknown field "${forbidden}" in body`));
      if (!error && jsonHoldsNul(text, value)) {
        return done(invalidRequest('the body holds a NUL character (\\u0000), which no field takes'), undefined);
      }
      if (!error && jsonHoldsLoneSurrogate(text, value)) {
        return done(
          invalidRequest('the body holds half of a UTF-16 surrogate pair (\\uD800 to \\uDFFF) without the other'),
          undefined,
        );
      }
      done(error, value);
    });
  };
}

/**
 * The Tailscale API's JSON routes read every body as JSON, whatever its `Content-Type`, as
 * Tailscale does: its older Go client (`tailscale.com/client/tailscale`) sends the bodies of
 * SetAuthorized, SetTags, SetRoutes and CreateKey with no type, and the curl examples of its
 * API reference (`--data-binary`) send curl's form type. A 415 would refuse them all; a body
 * that is not JSON is refused as such (400). For the routes registered in `app` only.
 */
export function readEveryBodyAsJson(app: FastifyInstance): void {
  app.addContentTypeParser('*', { parseAs: 'string' }, jsonBodyParser(app));
}

export function registerBodyParsing(app: FastifyInstance): void {
  // Fastify's built-in text/plain parser would turn a text body into a 400 where the
  // contract says 415. (The policy endpoints take their text through parsers of their own.)
  app.removeContentTypeParser('text/plain');

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser(app));

  // The type of the nothing a request sends is ignored, whether or not its route takes a body
  // (`curl -X POST -d ''` declares a form; a create then gets its defaults, not a 415):
  // without the header, Fastify skips parsing instead of looking for a parser of that type.
  // A callback, not an async function: every request runs it, and a promise per hook is a
  // microtask hop for nothing when the hook never waits.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.headers['content-type'] !== undefined && hasNoBody(request)) {
      delete request.headers['content-type'];
    }
    done();
  });

  // A client that closed the connection before its body was read leaves a stream that will
  // never end, and the call would wait on it for good, unanswered and unaudited: it is
  // refused instead (to no one), and its audit entry is written like any other.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    if (request.raw.destroyed && !hasNoBody(request)) {
      done(invalidRequest('the client closed the connection before its body was read'));
    } else done(null, payload);
  });
}

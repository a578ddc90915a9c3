/**
 * Fastify's and Ajv's own errors (validation, body limits, content types) as the API's
 * problems, with stable codes. http/error-handler.ts answers with them; a route that
 * validates on its own (a batch naming its bad entry) starts from them too.
 */

import type { ErrorCode } from '@warren/contract';
import type { FastifyError } from 'fastify';
import { ApiError } from '../core/errors.js';

/** Maps a Fastify/Ajv error onto the API's problem codes. */
export function toApiError(error: FastifyError | ApiError): ApiError {
  if (error instanceof ApiError) return error;
  if (error.validation) {
    const where = error.validationContext ?? 'request';
    const unknown = error.validation.find((v) => v.keyword === 'additionalProperties');
    if (unknown) {
      const field = String((unknown.params as { additionalProperty?: string }).additionalProperty);
      const path = unknown.instancePath ? `${unknown.instancePath.slice(1).replaceAll('/', '.')}.` : '';
      return new ApiError('unknown_field', `unknown field "${path}${field}" in ${where}`);
    }
    const first = error.validation[0];
    const path = first?.instancePath ? first.instancePath.slice(1).replaceAll('/', '.') : '';
    const subject = path ? `${where} field "${path}"` : where;
    // A tag, prefix or duration out of its bounds is malformed like any other (contract's requests.ts).
    const failed = (first as { parentSchema?: { 'x-problem-code'?: ErrorCode } } | undefined)?.parentSchema;
    const own = failed?.['x-problem-code'];
    if (own) return new ApiError(own, `${subject} ${first?.message ?? 'is invalid'}`);
    // A pattern says nothing to people: a schema that has words for it (`x-pattern-syntax`) is quoted.
    const syntax = (failed as { 'x-pattern-syntax'?: string } | undefined)?.['x-pattern-syntax'];
    if (first?.keyword === 'pattern' && syntax) {
      return new ApiError(
        'invalid_request',
        `${subject}: ${JSON.stringify(String((first as { data?: unknown }).data)).slice(0, 80)} ${syntax}`,
      );
    }
    // A union of literals fails once per literal ("must be equal to constant"): name them all.
    const allowed = error.validation
      .filter((v) => v.keyword === 'const' && v.instancePath === first?.instancePath)
      .map((v) => JSON.stringify((v.params as { allowedValue?: unknown }).allowedValue));
    if (allowed.length > 0) return new ApiError('invalid_request', `${subject} must be one of ${allowed.join(', ')}`);
    return new ApiError('invalid_request', `${subject} ${first?.message ?? 'is invalid'}`);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', 'the request body is larger than 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'send the body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', 'the body is empty but Content-Type says JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'Content-Length does not match the body');
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new ApiError('invalid_request', `the body is not valid JSON: ${error.message}`);
  }
  if (error.statusCode === 413) return new ApiError('payload_too_large', 'the request body is larger than 1 MiB');
  if (error.statusCode === 415) return new ApiError('unsupported_media_type', 'send the body as application/json');
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError('invalid_request', error.message);
  }
  return new ApiError('internal', 'an internal error occurred; quote the requestId when reporting it');
}

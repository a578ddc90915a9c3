/**
 * SCIM speaks its own error schema (RFC 7644 §3.12): `status` as a string, an optional
 * `scimType`, in `application/scim+json`. Every refusal under /scim/v2 — the pipeline's 401
 * and 429 included — is turned into it here.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../../core/errors.js';
import { toApiError } from '../../edge/to-api-error.js';

export const SCIM_TYPE = 'application/scim+json; charset=utf-8';
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** A refusal with SCIM's own `scimType` (invalidFilter, invalidValue, mutability, uniqueness…). */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly scimType: string | undefined,
    readonly detail: string,
  ) {
    super(detail);
  }
}

const SCIM_TYPES: Partial<Record<string, string>> = {
  conflict: 'uniqueness',
  invalid_request: 'invalidValue',
  unknown_field: 'invalidSyntax',
};

export function scimErrorHandler(error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) {
  let status: number;
  let scimType: string | undefined;
  let detail: string;
  if (error instanceof ScimError) {
    ({ status, scimType, detail } = error);
  } else {
    const api = toApiError(error);
    if (api.status >= 500) request.log.error({ err: error }, 'SCIM request failed');
    status = api.status;
    scimType = SCIM_TYPES[api.code];
    // A bug's detail stays inside; a server that is not set up for SCIM says what is missing.
    detail = api.code === 'internal' ? 'internal error' : api.detail;
    for (const [name, value] of Object.entries(api.headers)) reply.header(name, value);
  }
  return reply
    .code(status)
    .type(SCIM_TYPE)
    .send({ schemas: [ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail });
}

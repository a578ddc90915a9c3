/**
 * The domain errors: small factories with a stable machine code (see @warren/contract
 * ERROR_STATUS). Services throw them without knowing about HTTP; the error handler in http/
 * turns every ApiError into an RFC 9457 problem response.
 */
import { ERROR_STATUS, type ErrorCode, type PolicyProblem } from '@warren/contract';

export interface ProblemExtras {
  errors?: PolicyProblem[];
  scope?: string;
  index?: number;
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extras: ProblemExtras = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.status = ERROR_STATUS[code];
  }
}

export const invalidRequest = (detail: string, extras?: ProblemExtras) =>
  new ApiError('invalid_request', detail, extras);
export const notFound = (detail: string) => new ApiError('not_found', detail);
export const invalidState = (detail: string) => new ApiError('invalid_state', detail);
export const planLimit = (detail: string) => new ApiError('plan_limit', detail);
/** `field`: the field the value was sent in, named first when the caller knows it. */
export const invalidDuration = (value: string, field?: string) =>
  new ApiError(
    'invalid_duration',
    `${field ? `${field}: ` : ''}"${value}" is not a duration: use an integer and one unit of s, m, h or d (e.g. 90s, 15m, 24h, 7d)`,
  );
export const invalidTag = (value: string) =>
  new ApiError(
    'invalid_tag',
    `"${value}" is not a tag: tags look like tag:name (lowercase letters, digits and dashes)`,
  );
export const invalidPrefix = (value: string, why: string) => new ApiError('invalid_prefix', `"${value}" ${why}`);
/** `orRead`: the call is a read, which `read` allows as well as the resource's own scope. */
export function insufficientScope(scope: string, orRead = false): ApiError {
  const read = orRead && scope !== 'read' && scope !== 'all' ? ' or "read"' : '';
  const all = scope === 'all' ? '' : ' (or "all")';
  return new ApiError('insufficient_scope', `this call needs an API key with scope "${scope}"${read}${all}`, { scope });
}

const BEARER = 'Bearer realm="warren", error="invalid_token"';
export const unauthenticated = (
  detail: string,
  code: 'unauthenticated' | 'key_expired' | 'key_revoked' = 'unauthenticated',
) => new ApiError(code, detail, {}, { 'WWW-Authenticate': BEARER });

/**
 * The stable, machine-readable error codes of the API and the HTTP status each maps to.
 * Clients branch on `code`; `detail` is for people.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  unknown_field: 400,
  invalid_duration: 400,
  invalid_tag: 400,
  invalid_prefix: 400,
  policy_invalid: 400,
  unauthenticated: 401,
  key_expired: 401,
  key_revoked: 401,
  insufficient_scope: 403,
  csrf_failed: 403,
  sso_required: 403,
  access_denied: 403,
  plan_limit: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  request_timeout: 408,
  invalid_state: 409,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  expectation_failed: 417,
  policy_too_complex: 422,
  upgrade_required: 426,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  not_implemented: 501,
  unavailable: 503,
  http_version_not_supported: 505,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** RFC 9457 titles (the reason phrase of the status). */
export const STATUS_TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  417: 'Expectation Failed',
  422: 'Unprocessable Content',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  505: 'HTTP Version Not Supported',
};

/** One problem found in a policy document, at the offending token. */
export interface PolicyProblem {
  line: number;
  column: number;
  msg: string;
}

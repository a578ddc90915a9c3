/**
 * Route schemas as the OpenAPI document shows them: references to the contract's named
 * schemas, and the error responses every route can answer with. Routes of the admin API
 * (http/routes/) and of the node protocol (control/native/) are documented alike.
 */
import type { FastifySchema } from 'fastify';
import { Type } from 'typebox';

export const ref = (id: string) => Type.Unsafe({ $ref: `${id}#` });
/**
 * A 201 answer: the new record, and its path in `Location` (RFC 9110 §15.3.2), where a GET
 * reads it again.
 */
export const created = (id: string, path: string) => ({
  description: `the new ${id}; Location: its path, ${path}`,
  headers: { Location: { type: 'string', description: `the path of the new ${id}: ${path}` } },
  content: { 'application/json': { schema: ref(id) } },
});

/** Error responses: RFC 9457 problems, served (and documented) as application/problem+json. */
const problem = {
  description: 'Problem details (RFC 9457)',
  content: { 'application/problem+json': { schema: ref('Problem') } },
};

/** Error statuses every authenticated route can answer with. */
const COMMON_ERRORS = { 401: problem, 403: problem, 429: problem, 500: problem } as const;

/**
 * Error statuses that follow from what a route takes: anything it validates can be 400, a
 * path parameter can be longer than the router accepts (414), a body can be too large (413)
 * or of another type (415).
 */
function inputErrors(schema: FastifySchema): number[] {
  const errors: number[] = [];
  if (schema.params || schema.querystring || schema.body) errors.push(400);
  if (schema.params) errors.push(414);
  if (schema.body) errors.push(413, 415);
  return errors;
}

/** A route schema with the standard error responses merged in. */
export function apiSchema(
  schema: FastifySchema & { response?: Record<string, unknown> },
  errors: number[] = [],
): FastifySchema {
  const response: Record<string, unknown> = { ...COMMON_ERRORS, ...schema.response };
  for (const status of [...inputErrors(schema), ...errors]) response[status] = problem;
  return { security: [{ bearer: [] }], ...schema, response };
}

/** The 200 response schema of a log page whose entries are the component `entry`. */
export function logPageSchema(entry: string) {
  return Type.Object({ entries: Type.Array(ref(entry)), nextCursor: Type.String(), hasMore: Type.Boolean() });
}

/**
 * OpenAPI 3.1 from the route schemas. Components are the contract's named schemas, so the
 * document reads `Device` and `Problem`; every route documents its error responses.
 */
import swagger from '@fastify/swagger';
import { COMPONENT_SCHEMAS } from '@warren/contract';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { Type } from 'typebox';

export const ref = (id: string) => Type.Unsafe({ $ref: `${id}#` });
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

export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  for (const schema of COMPONENT_SCHEMAS) app.addSchema(schema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Warren management API',
        version,
        description: 'Devices, users, access policy, keys, routes and logs of a private mesh network.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'API key (wrn_api_…) or, for /v1/node/*, a node credential',
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
}

/**
 * OpenAPI 3.1 from the route schemas. Components are the contract's named schemas, so the
 * document reads `Device` and `Problem`; every route documents its error responses
 * (edge/api-schema.ts).
 */
import swagger from '@fastify/swagger';
import { COMPONENT_SCHEMAS } from '@warren/contract';
import type { FastifyInstance } from 'fastify';

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

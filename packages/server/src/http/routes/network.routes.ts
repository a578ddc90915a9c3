/** GET /v1/network: the caller's network with its plan, limits and usage (any scope). */
import type { FastifyInstance } from 'fastify';
import { describeNetwork } from '../../modules/network/network.service.js';
import { apiSchema, ref } from '../openapi.js';

export async function networkRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/network',
    {
      config: { scope: 'any' },
      schema: apiSchema({
        operationId: 'getNetwork',
        tags: ['network'],
        summary: 'The network of the calling key',
        response: { 200: ref('Network') },
      }),
    },
    async (request) => describeNetwork(app.ctx.db, request.principal!.networkId, app.ctx.settings),
  );
}

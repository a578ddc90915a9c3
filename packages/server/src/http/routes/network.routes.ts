/**
 * GET /v1/network: the caller's network with its plan, limits, usage and settings (any scope:
 * not a member's session, which reads its own devices only);
 * PATCH /v1/network: its device settings (scope all).
 */
import { PatchNetworkBody, type PatchNetworkRequest } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { actorOf } from '../../edge/actor.js';
import { apiSchema, ref } from '../../edge/api-schema.js';
import { describeNetwork } from '../../modules/network/network.service.js';
import { updateNetworkSettings } from '../../modules/network/settings.service.js';
import { redirectUriIfKnown } from '../public-url.js';

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
    async (request) =>
      describeNetwork(
        app.ctx.db,
        request.principal!.networkId,
        redirectUriIfKnown(request),
        app.ctx.settings,
        request.principal!.readStamp,
      ),
  );

  app.patch<{ Body: PatchNetworkRequest }>(
    '/network',
    {
      config: { scope: 'all' },
      schema: apiSchema(
        {
          operationId: 'updateNetwork',
          tags: ['network'],
          summary: "Change the network's device settings: approval of new devices, login lifetime",
          body: PatchNetworkBody,
          response: { 200: ref('Network') },
        },
        [400],
      ),
    },
    async (request) => updateNetworkSettings(app.ctx, actorOf(request), request.body, redirectUriIfKnown(request)),
  );
}

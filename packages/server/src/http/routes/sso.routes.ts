/** /v1/network/sso: a network's OpenID provider (read; set with scope `all`). */
import { SetSsoBody, type SetSsoRequest } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { actorOf } from '../../edge/actor.js';
import { apiSchema, ref } from '../../edge/api-schema.js';
import { getSso, presentSso, setSso } from '../../modules/sso/sso.service.js';
import { callbackUrl } from '../public-url.js';

const tags = ['network'];

export async function ssoRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get(
    '/network/sso',
    {
      config: { scope: 'read' },
      schema: apiSchema(
        {
          operationId: 'getSso',
          tags,
          summary: "The network's single sign-on settings (never the client secret)",
          response: { 200: ref('SsoConfig') },
        },
        [404],
      ),
    },
    async (request) =>
      presentSso(await getSso(ctx, request.principal!.networkId, request.principal!.readStamp), callbackUrl(request)),
  );

  app.put<{ Body: SetSsoRequest }>(
    '/network/sso',
    {
      config: { scope: 'all' },
      schema: apiSchema(
        {
          operationId: 'setSso',
          tags,
          summary: 'Set the OpenID provider people sign in with, and whether only it signs in',
          body: SetSsoBody,
          response: { 200: ref('SsoConfig') },
        },
        [400],
      ),
    },
    async (request) => {
      // Refused before anything is stored when the server has no public URL.
      const redirectUri = callbackUrl(request);
      return presentSso(await setSso(ctx, actorOf(request), request.body), redirectUri);
    },
  );
}

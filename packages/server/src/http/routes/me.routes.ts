/** GET /v1/me: who the caller is — the signed-in person or the API key — and what it may do. */
import type { MeBody } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { apiSchema, ref } from '../../edge/api-schema.js';
import { iso } from '../../lib/time.js';
import { networkName } from '../../modules/network/network.service.js';
import { presentUser } from '../../modules/users/users.presenter.js';
import { findUser } from '../../modules/users/users.repository.js';

export async function meRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.get(
    '/me',
    {
      config: { scope: 'any' },
      schema: apiSchema({
        operationId: 'getMe',
        tags: ['network'],
        summary: 'The caller (signed-in user or API key), its network and what it may do',
        response: { 200: ref('Me') },
      }),
    },
    async (request): Promise<MeBody> => {
      const principal = request.principal!;
      const network = await networkName(ctx.db, principal.networkId, principal.readStamp);
      const { user } = principal;
      if (!user) {
        return {
          type: 'key',
          network,
          user: null,
          key: { id: principal.keyId ?? '', name: principal.keyName },
          scopes: principal.scopes,
          ownDevicesOnly: false,
          expires: iso(principal.expiresAt),
        };
      }
      const row = await findUser(ctx.db, principal.networkId, user.id);
      return {
        type: 'user',
        network,
        user: row ? presentUser(row) : null,
        key: null,
        scopes: principal.scopes,
        ownDevicesOnly: user.role === 'member',
        csrfToken: user.csrfToken,
        expires: iso(user.sessionExpiresAt),
      };
    },
  );
}

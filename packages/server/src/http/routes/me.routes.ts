/** GET /v1/me: who the caller is — the signed-in person or the API key — and what it may do. */
import type { MeBody } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { apiSchema, ref } from '../../edge/api-schema.js';
import type { ApiPrincipal } from '../../edge/request-principals.js';
import { type Derived, keptDerivation } from '../../lib/kept.js';
import { iso } from '../../lib/time.js';
import { networkName } from '../../modules/network/network.service.js';
import { presentUser } from '../../modules/users/users.presenter.js';
import { findUser } from '../../modules/users/users.repository.js';

/**
 * An API key's answer, made once per kept network row and kept caller (lib/kept.ts;
 * http/authenticate.ts keeps the caller of a kept key row), so its text is written once too.
 * Nothing in it follows the clock: an expired key is refused before it gets here.
 */
const keyCaller = keptDerivation(
  ([network, principal]: readonly [{ id: string; name: string }, ApiPrincipal]): Derived<MeBody> => ({
    value: {
      type: 'key',
      network,
      user: null,
      key: { id: principal.keyId ?? '', name: principal.keyName },
      scopes: principal.scopes,
      ownDevicesOnly: false,
      expires: iso(principal.expiresAt),
    },
    until: Number.POSITIVE_INFINITY,
  }),
);

export async function meRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.get(
    '/me',
    {
      config: { scope: 'self' },
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
      if (!user) return keyCaller([network, principal], 0);
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

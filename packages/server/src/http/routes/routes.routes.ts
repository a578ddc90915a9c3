/** /v1/routes: subnet routes devices advertise, and their approval. */
import { RouteListQuery, type RouteState } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../edge/actor.js';
import { apiSchema, ref } from '../../edge/api-schema.js';
import { presentRouteList } from '../../modules/routes/routes.presenter.js';
import { listRoutes } from '../../modules/routes/routes.repository.js';
import { approveRoute, disableRoute } from '../../modules/routes/routes.service.js';

const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const tags = ['routes'];

export async function routesRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get<{ Querystring: { state?: RouteState; device?: string } }>(
    '/routes',
    {
      config: { scope: 'devices' },
      schema: apiSchema(
        {
          operationId: 'listRoutes',
          tags,
          summary: 'List routes (filter by state and by device id or name)',
          querystring: RouteListQuery,
          response: { 200: Type.Object({ routes: Type.Array(ref('Route')) }) },
        },
        [400],
      ),
    },
    async (request) => {
      const now = ctx.clock.now();
      const { networkId, readStamp } = request.principal!;
      const rows = await listRoutes(ctx.db, networkId, now, request.query, readStamp);
      return presentRouteList([rows], now);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/routes/:id/approve',
    {
      config: { scope: 'devices' },
      schema: apiSchema(
        {
          operationId: 'approveRoute',
          tags,
          summary: 'Approve a pending or disabled route',
          params: IdParams,
          response: { 200: ref('Route') },
        },
        [404, 409],
      ),
    },
    async (request) => approveRoute(ctx, actorOf(request), request.params.id),
  );

  app.post<{ Params: { id: string } }>(
    '/routes/:id/disable',
    {
      config: { scope: 'devices' },
      schema: apiSchema(
        {
          operationId: 'disableRoute',
          tags,
          summary: 'Disable an approved route',
          params: IdParams,
          response: { 200: ref('Route') },
        },
        [404, 409],
      ),
    },
    async (request) => disableRoute(ctx, actorOf(request), request.params.id),
  );
}

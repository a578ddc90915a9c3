/**
 * A GET of one log's pages whose bodies are kept (modules/logs/kept-pages.ts): the route sends
 * the bytes the log's pages give, serialised with the route's own response schema. The audit
 * log and the events are served this way; each route file says only what differs.
 */
import type { FastifyInstance } from 'fastify';
import { apiSchema, logPageSchema } from '../edge/api-schema.js';
import type { PageBody } from '../modules/logs/kept-pages.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export interface LogPageRoute<Q, P> {
  url: string;
  /** The schema name of an entry (`AuditEntry`, `Event`). */
  entry: string;
  operationId: string;
  tag: string;
  summary: string;
  querystring: unknown;
  /** The log's pages of a network for a query, serialised by the given function. */
  pages: (networkId: string, query: Q, serialize: (page: P) => string) => Promise<PageBody>;
}

export function logPageRoute<Q, P>(app: FastifyInstance, route: LogPageRoute<Q, P>): void {
  const schema = logPageSchema(route.entry);
  // Compiled at the first call, once: Fastify compiles response schemas lazily (serializers.ts).
  let serializer: ((page: P) => string) | undefined;
  app.get(
    route.url,
    {
      config: { scope: 'read' },
      schema: apiSchema(
        {
          operationId: route.operationId,
          tags: [route.tag],
          summary: route.summary,
          querystring: route.querystring,
          response: { 200: schema },
        },
        [400],
      ),
    },
    async (request, reply) => {
      serializer ??= reply.compileSerializationSchema(schema as unknown as Record<string, unknown>) as (
        page: P,
      ) => string;
      const { body } = await route.pages(request.principal!.networkId, request.query as Q, serializer);
      return reply.type(JSON_TYPE).send(body);
    },
  );
}

/** /v1/keys: auth keys (enrollment) and API keys (management). */
import { CreateKeyBody, type CreateKeyRequest, KeyListQuery, type KeyState } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../edge/actor.js';
import { apiSchema, created, ref } from '../../edge/api-schema.js';
import { presentKeyList } from '../../modules/keys/keys.presenter.js';
import { listKeys } from '../../modules/keys/keys.repository.js';
import { createKey, deleteKey, getKey } from '../../modules/keys/keys.service.js';

const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const tags = ['keys'];

export async function keysRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get<{ Querystring: { type?: 'auth' | 'api'; state?: KeyState } }>(
    '/keys',
    {
      config: { scope: 'keys' },
      schema: apiSchema(
        {
          operationId: 'listKeys',
          tags,
          summary: 'List keys',
          querystring: KeyListQuery,
          response: { 200: Type.Object({ keys: Type.Array(ref('Key')) }) },
        },
        [400],
      ),
    },
    async (request) => {
      const now = ctx.clock.now();
      const { networkId, readStamp } = request.principal!;
      const rows = await listKeys(ctx.db, networkId, now, request.query, readStamp);
      return presentKeyList([rows], now);
    },
  );

  app.post<{ Body: CreateKeyRequest }>(
    '/keys',
    {
      config: { scope: 'keys' },
      schema: apiSchema(
        {
          operationId: 'createKey',
          tags,
          summary: 'Create an auth key or an API key (the secret is shown once)',
          body: CreateKeyBody,
          response: { 201: created('Key', '/v1/keys/{id}') },
        },
        [400],
      ),
    },
    async (request, reply) => {
      const key = await createKey(ctx, actorOf(request, 201), request.body);
      return reply.code(201).header('location', `/v1/keys/${key.id}`).send(key);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/keys/:id',
    {
      config: { scope: 'keys' },
      schema: apiSchema(
        { operationId: 'getKey', tags, summary: 'One key', params: IdParams, response: { 200: ref('Key') } },
        [404],
      ),
    },
    async (request) => getKey(ctx, request.principal!.networkId, request.params.id, request.principal!.readStamp),
  );

  app.delete<{ Params: { id: string } }>(
    '/keys/:id',
    {
      config: { scope: 'keys' },
      schema: apiSchema(
        {
          operationId: 'deleteKey',
          tags,
          summary: 'Revoke a key: it stops working at once',
          params: IdParams,
          response: { 204: Type.Null() },
        },
        [404],
      ),
    },
    async (request, reply) => {
      await deleteKey(ctx, actorOf(request, 204), request.params.id);
      return reply.code(204).send();
    },
  );
}

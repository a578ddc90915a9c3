/** /v1/users: list (read), create, change role, remove (users scope). */
import {
  CreateUserBody,
  type CreateUserRequest,
  PatchUserBody,
  UserListQuery,
  type UserListRequest,
} from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../edge/actor.js';
import { apiSchema, created, ref } from '../../edge/api-schema.js';
import { presentUserList } from '../../modules/users/users.presenter.js';
import { listUsers } from '../../modules/users/users.repository.js';
import { createUser, deleteUser, type UserChange, updateUser } from '../../modules/users/users.service.js';

const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const tags = ['users'];

export async function usersRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get<{ Querystring: UserListRequest }>(
    '/users',
    {
      config: { scope: 'users' },
      schema: apiSchema(
        {
          operationId: 'listUsers',
          tags,
          summary: 'List the users of the network',
          querystring: UserListQuery,
          response: { 200: Type.Object({ users: Type.Array(ref('User')) }) },
        },
        [400],
      ),
    },
    async (request) => {
      // The schema has already refused anything but the six roles (400 invalid_request).
      const { networkId, readStamp } = request.principal!;
      const rows = await listUsers(ctx.db, networkId, request.query.role, readStamp);
      return presentUserList([rows], ctx.clock.now());
    },
  );

  app.post<{ Body: CreateUserRequest }>(
    '/users',
    {
      config: { scope: 'users' },
      schema: apiSchema(
        {
          operationId: 'createUser',
          tags,
          summary: 'Add a user',
          body: CreateUserBody,
          response: { 201: created('User', '/v1/users/{id}') },
        },
        [400, 409],
      ),
    },
    async (request, reply) => {
      const user = await createUser(ctx, actorOf(request, 201), request.body);
      return reply.code(201).header('location', `/v1/users/${user.id}`).send(user);
    },
  );

  app.patch<{ Params: { id: string }; Body: UserChange }>(
    '/users/:id',
    {
      config: { scope: 'users' },
      schema: apiSchema(
        {
          operationId: 'updateUser',
          tags,
          summary: "Change a user's role or status (suspend, restore)",
          params: IdParams,
          body: PatchUserBody,
          response: { 200: ref('User') },
        },
        [400, 404, 409],
      ),
    },
    async (request) => updateUser(ctx, actorOf(request), request.params.id, request.body),
  );

  app.delete<{ Params: { id: string } }>(
    '/users/:id',
    {
      config: { scope: 'users' },
      schema: apiSchema(
        {
          operationId: 'deleteUser',
          tags,
          summary: 'Remove a user and their devices (keys stay)',
          params: IdParams,
          response: { 204: Type.Null() },
        },
        [404, 409],
      ),
    },
    async (request, reply) => {
      await deleteUser(ctx, actorOf(request, 204), request.params.id);
      return reply.code(204).send();
    },
  );
}

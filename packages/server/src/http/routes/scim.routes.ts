/**
 * SCIM 2.0 at /scim/v2 (RFC 7644), for identity providers that provision people (Okta, Entra
 * ID): an API key with scope `users` authenticates, as on /v1. `active: false` suspends a user
 * (sessions end, devices are disconnected, nothing is deleted); DELETE offboards (the user and
 * their devices go). The rules are the users service's: seats, the last active owner.
 * Outside /v1 and the OpenAPI document: SCIM documents itself (ServiceProviderConfig, Schemas).
 */
import type { FastifyInstance } from 'fastify';
import { insufficientScope } from '../../core/errors.js';
import { actorOf } from '../../edge/actor.js';
import { presentUser } from '../../modules/users/users.presenter.js';
import { findUser, listUsers } from '../../modules/users/users.repository.js';
import { createUser, defaultDisplayName, deleteUser, updateUser } from '../../modules/users/users.service.js';
import { jsonHoldsNul } from '../bodies.js';
import { noRouteError } from '../error-handler.js';
import { publicBase } from '../public-url.js';
import {
  LIST_SCHEMA,
  resourceTypeById,
  resourceTypes,
  schemaById,
  schemas,
  serviceProviderConfig,
} from '../scim/scim.discovery.js';
import { SCIM_TYPE, ScimError, scimErrorHandler } from '../scim/scim.errors.js';
import { presentScimUser, readScimPatch, readScimUser, readUserNameFilter } from '../scim/scim.users.js';

const MAX_COUNT = 200;
const config = { scope: 'users' as const };
const schema = { hide: true };

type IdRequest = { Params: { id: string } };

/**
 * A paging integer, at least `least`: RFC 7644 §3.4.2.4 reads a startIndex below 1 as 1 and a
 * negative count as 0, so those are clamped, not refused; what is no integer at all is.
 */
function pagingInteger(value: string | undefined, fallback: number, least: number, field: string): number {
  if (value === undefined) return fallback;
  if (!/^-?[0-9]{1,9}$/.test(value)) throw new ScimError(400, 'invalidValue', `${field} must be a whole number`);
  return Math.max(least, Number(value));
}

export async function scimRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.setErrorHandler(scimErrorHandler);
  // An unknown path or method under /scim/v2 is refused in SCIM's error shape too (the
  // identity provider reads every answer from here as SCIM), with 405's `Allow`.
  app.setNotFoundHandler((request, reply) =>
    scimErrorHandler(noRouteError(app, request.method, request.url), request, reply),
  );
  app.addContentTypeParser('application/scim+json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    const text = String(body);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return done(new ScimError(400, 'invalidSyntax', 'the body is not valid JSON'), undefined);
    }
    if (jsonHoldsNul(text, value)) {
      return done(
        new ScimError(400, 'invalidValue', 'the body holds a NUL character (\\u0000), which no attribute takes'),
      );
    }
    done(null, value);
  });
  // Every SCIM call, reads included, needs `users`: a read-only key does not provision.
  app.addHook('preHandler', async (request) => {
    const scopes = request.principal?.scopes ?? [];
    if (!scopes.includes('users') && !scopes.includes('all')) throw insufficientScope('users');
    // Answers carry absolute URLs: without a public URL, refuse before anything changes.
    publicBase(request, 'SCIM');
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode < 300 && reply.statusCode !== 204) reply.type(SCIM_TYPE);
    return payload;
  });

  const requireUser = async (networkId: string, id: string) => {
    const row = await findUser(ctx.db, networkId, id);
    if (!row) throw new ScimError(404, undefined, `user ${id} does not exist`);
    return presentUser(row);
  };

  app.get('/ServiceProviderConfig', { config, schema }, async (request) =>
    serviceProviderConfig(publicBase(request, 'SCIM')),
  );
  app.get('/Schemas', { config, schema }, async (request) => schemas(publicBase(request, 'SCIM')));
  app.get('/ResourceTypes', { config, schema }, async (request) => resourceTypes(publicBase(request, 'SCIM')));
  app.get<IdRequest>('/Schemas/:id', { config, schema }, async (request) => {
    const found = schemaById(publicBase(request, 'SCIM'), request.params.id);
    if (!found) throw new ScimError(404, undefined, `schema ${request.params.id} does not exist`);
    return found;
  });
  app.get<IdRequest>('/ResourceTypes/:id', { config, schema }, async (request) => {
    const found = resourceTypeById(publicBase(request, 'SCIM'), request.params.id);
    if (!found) throw new ScimError(404, undefined, `resource type ${request.params.id} does not exist`);
    return found;
  });

  app.get<{ Querystring: { filter?: string; startIndex?: string; count?: string } }>(
    '/Users',
    { config, schema },
    async (request) => {
      const userName = readUserNameFilter(request.query.filter);
      const startIndex = pagingInteger(request.query.startIndex, 1, 1, 'startIndex');
      const count = Math.min(MAX_COUNT, pagingInteger(request.query.count, 100, 0, 'count'));
      const rows = (await listUsers(ctx.db, request.principal!.networkId)).filter(
        (row) => userName === undefined || row.login_name === userName,
      );
      const page = rows.slice(startIndex - 1, startIndex - 1 + count);
      const base = publicBase(request, 'SCIM');
      return {
        schemas: [LIST_SCHEMA],
        totalResults: rows.length,
        startIndex,
        itemsPerPage: page.length,
        Resources: page.map((row) => presentScimUser(presentUser(row), base)),
      };
    },
  );

  app.get<IdRequest>('/Users/:id', { config, schema }, async (request) =>
    presentScimUser(await requireUser(request.principal!.networkId, request.params.id), publicBase(request, 'SCIM')),
  );

  app.post('/Users', { config, schema }, async (request, reply) => {
    const input = readScimUser(request.body);
    const user = await createUser(
      ctx,
      actorOf(request, 201),
      {
        loginName: input.userName,
        ...(input.displayName ? { displayName: input.displayName } : {}),
        role: 'member',
      },
      input.active === false ? 'suspended' : 'active',
    );
    const created = presentScimUser(user, publicBase(request, 'SCIM'));
    // RFC 7644 §3.3: the new resource's URI in Location as well as in meta.location.
    return reply.code(201).header('location', created.meta.location).send(created);
  });

  app.put<IdRequest>('/Users/:id', { config, schema }, async (request) => {
    const input = readScimUser(request.body);
    const current = await requireUser(request.principal!.networkId, request.params.id);
    if (input.userName.toLowerCase() !== current.loginName) {
      throw new ScimError(400, 'mutability', 'userName (the login name) cannot be changed');
    }
    const user = await updateUser(ctx, actorOf(request), current.id, {
      ...(input.displayName ? { displayName: input.displayName } : {}),
      ...(input.active !== undefined ? { status: input.active ? 'active' : 'suspended' } : {}),
    });
    return presentScimUser(user, publicBase(request, 'SCIM'));
  });

  app.patch<IdRequest>('/Users/:id', { config, schema }, async (request) => {
    const change = readScimPatch(request.body);
    const current = await requireUser(request.principal!.networkId, request.params.id);
    const displayName = change.displayName === null ? defaultDisplayName(current.loginName) : change.displayName;
    const user = await updateUser(ctx, actorOf(request), current.id, {
      ...(displayName !== undefined ? { displayName } : {}),
      ...(change.active !== undefined ? { status: change.active ? 'active' : 'suspended' } : {}),
    });
    return presentScimUser(user, publicBase(request, 'SCIM'));
  });

  app.delete<IdRequest>('/Users/:id', { config, schema }, async (request, reply) => {
    await requireUser(request.principal!.networkId, request.params.id);
    await deleteUser(ctx, actorOf(request, 204), request.params.id);
    return reply.code(204).send();
  });
}

/**
 * Tailscale's key endpoints over Warren's keys: auth keys (`keyType: "auth"`, the default)
 * with their `capabilities.devices.create`, and API keys listed and read as `keyType: "api"`.
 * A key's secret appears only in the answer that creates it. Scopes as on /v1 (`keys`).
 */
import type { KeyBody } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../edge/actor.js';
import { presentKey } from '../../modules/keys/keys.presenter.js';
import { listKeys } from '../../modules/keys/keys.repository.js';
import { createKey, deleteKey, getKey } from '../../modules/keys/keys.service.js';
import { invalidRequest } from '../problem.js';
import { listOrEmpty, tailnetOf } from './tailnet.js';

const config = { scope: 'keys' as const };
const hide = { hide: true };
const open = { additionalProperties: true } as const;
const Flag = Type.Optional(Type.Union([Type.Boolean(), Type.Null()]));

const CreateBody = Type.Object(
  {
    keyType: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    capabilities: Type.Optional(
      Type.Object(
        {
          devices: Type.Optional(
            Type.Object(
              {
                create: Type.Optional(
                  Type.Object(
                    {
                      reusable: Flag,
                      ephemeral: Flag,
                      preauthorized: Flag,
                      tags: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
                    },
                    open,
                  ),
                ),
              },
              open,
            ),
          ),
        },
        open,
      ),
    ),
    expirySeconds: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
  },
  open,
);
type CreateRequest = {
  keyType?: string | null;
  capabilities?: {
    devices?: {
      create?: {
        reusable?: boolean | null;
        ephemeral?: boolean | null;
        preauthorized?: boolean | null;
        tags?: string[] | null;
      };
    };
  };
  expirySeconds?: number | null;
  description?: string | null;
};

/** Warren's key record → Tailscale's `Key`. Times are RFC 3339 or null, never "". */
export function presentTailscaleKey(key: KeyBody) {
  const created = Date.parse(key.created);
  const common = {
    id: key.id,
    keyType: key.type,
    ...(key.key ? { key: key.key } : {}),
    description: key.type === 'api' ? (key.name ?? key.description) : key.description,
    expirySeconds: Math.round((Date.parse(key.expires) - created) / 1000),
    created: key.created,
    updated: key.created,
    expires: key.expires,
    revoked: null as string | null,
    invalid: key.state !== 'valid',
    userId: key.user ?? '',
  };
  if (key.type === 'api') return { ...common, scopes: key.scopes };
  return {
    ...common,
    capabilities: {
      devices: {
        create: {
          reusable: key.reusable ?? false,
          ephemeral: key.ephemeral ?? false,
          preauthorized: key.preApproved ?? false,
          tags: key.tags ?? [],
        },
      },
    },
    tags: key.tags ?? [],
  };
}

export async function tailscaleKeyRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get<{ Params: { tailnet: string }; Querystring: { all?: string } }>(
    '/tailnet/:tailnet/keys',
    { config, schema: hide },
    async (request) => {
      const networkId = tailnetOf(request);
      const now = ctx.clock.now();
      // As Tailscale: the keys that work; `all=true` adds the expired, revoked and spent ones.
      const rows = await listKeys(ctx.db, networkId, now, request.query.all === 'true' ? {} : { state: 'valid' });
      return { keys: rows.map((row) => presentTailscaleKey(presentKey(row, now))) };
    },
  );

  app.post<{ Params: { tailnet: string }; Body: CreateRequest }>(
    '/tailnet/:tailnet/keys',
    { config, schema: { ...hide, body: CreateBody } },
    async (request) => {
      tailnetOf(request);
      const body = request.body;
      const keyType = body.keyType ?? 'auth';
      if (keyType !== 'auth') {
        throw invalidRequest(`keyType "${keyType}" is not supported here; Warren creates auth keys (keyType "auth")`);
      }
      const create = body.capabilities?.devices?.create ?? {};
      const key = await createKey(ctx, actorOf(request), {
        type: 'auth',
        reusable: create.reusable ?? false,
        ephemeral: create.ephemeral ?? false,
        preApproved: create.preauthorized ?? false,
        tags: listOrEmpty(create.tags),
        description: body.description ?? '',
        // 0 or absent: Warren's default lifetime (90 days), as Tailscale's.
        ...(body.expirySeconds ? { expiresIn: `${body.expirySeconds}s` } : {}),
      });
      return presentTailscaleKey(key);
    },
  );

  app.get<{ Params: { tailnet: string; id: string } }>(
    '/tailnet/:tailnet/keys/:id',
    { config, schema: hide },
    async (request) => presentTailscaleKey(await getKey(ctx, tailnetOf(request), request.params.id)),
  );

  app.delete<{ Params: { tailnet: string; id: string } }>(
    '/tailnet/:tailnet/keys/:id',
    { config, schema: hide },
    async (request, reply) => {
      tailnetOf(request);
      await deleteKey(ctx, actorOf(request), request.params.id);
      return reply.code(200).send();
    },
  );
}

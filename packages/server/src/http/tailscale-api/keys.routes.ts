/**
 * Tailscale's key endpoints over Warren's keys and OAuth clients: auth keys (`keyType:
 * "auth"`, the default) with their `capabilities.devices.create`, API keys listed and read as
 * `keyType: "api"`, and OAuth clients (`keyType: "client"`) with Tailscale's scopes, changed
 * wholesale with PUT. A secret appears only in the answer that creates it. Scopes as on /v1
 * (`keys`); an OAuth token needs `auth_keys` for keys and `oauth_keys` for clients.
 */
import { type KeyBody, MAX_KEY_LIFETIME_MS, type TailscaleResource } from '@warren/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../../core/errors.js';
import { actorOf } from '../../edge/actor.js';
import { keptDerivation } from '../../lib/kept.js';
import { iso, isoOrNull } from '../../lib/time.js';
import { firstKeyChange, type KeyRow, keyStateChangesAt, presentKey } from '../../modules/keys/keys.presenter.js';
import { findKey, listKeys } from '../../modules/keys/keys.repository.js';
import { createKey, deleteKey } from '../../modules/keys/keys.service.js';
import { listClients, type OAuthClientRow } from '../../modules/oauth/oauth.repository.js';
import {
  createOAuthClient,
  deleteOAuthClient,
  getOAuthClient,
  type OAuthClient,
  presentClient,
  setOAuthClient,
} from '../../modules/oauth/oauth.service.js';
import { allowsCall } from '../../modules/oauth/scopes.js';
import { requireScope } from '../authenticate.js';
import { invalidRequest, notFound } from '../problem.js';
import { listOrEmpty, queryFlag, tailnetOf } from './tailnet.js';
import { tailscaleTime, tailscaleTimeOrNull } from './times.js';

const config = { scope: 'keys' as const, tailscaleScope: ['auth_keys', 'oauth_keys'] as TailscaleResource[] };
const hide = { hide: true };
const open = { additionalProperties: true } as const;
const Flag = Type.Optional(Type.Union([Type.Boolean(), Type.Null()]));
const Strings = Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 80 }), { maxItems: 64 }), Type.Null()]));
const Description = Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()]));

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
    description: Description,
    // keyType "client": Tailscale's scopes and tags, and Warren's own rateLimit (as on /v1).
    scopes: Strings,
    tags: Strings,
    rateLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  },
  open,
);
const SetBody = Type.Object(
  {
    keyType: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    scopes: Strings,
    tags: Strings,
    description: Description,
  },
  open,
);
type ClientRequest = {
  keyType?: string | null;
  scopes?: string[] | null;
  tags?: string[] | null;
  description?: string | null;
  rateLimit?: number;
};
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
} & ClientRequest;

/**
 * Warren's key record → Tailscale's `Key`. Times are RFC 3339 or null, never "". `revoked` is
 * when the key was revoked (deleted), as Tailscale shows it beside `invalid: true`; `/v1`'s
 * record does not carry that time, so the caller passes the row's.
 */
export function presentTailscaleKey(key: KeyBody, revokedAt: number | null = null) {
  const created = Date.parse(key.created);
  const common = {
    id: key.id,
    keyType: key.type,
    ...(key.key ? { key: key.key } : {}),
    description: key.type === 'api' ? (key.name ?? key.description) : key.description,
    expirySeconds: Math.round((Date.parse(key.expires) - created) / 1000),
    created: tailscaleTime(key.created),
    updated: tailscaleTime(revokedAt === null ? key.created : iso(revokedAt)),
    expires: tailscaleTime(key.expires),
    revoked: tailscaleTimeOrNull(isoOrNull(revokedAt)),
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

/**
 * An OAuth client → Tailscale's `Key` of type `client`: no expiry (a client lasts until deleted),
 * unless an API key made it, which it does not outlive.
 */
export function presentTailscaleClient(client: OAuthClient, secret?: string) {
  return {
    id: client.id,
    keyType: 'client',
    ...(secret ? { key: secret } : {}),
    description: client.description,
    expirySeconds: null,
    created: tailscaleTime(iso(client.createdAt)),
    updated: tailscaleTime(iso(client.updatedAt)),
    expires: tailscaleTimeOrNull(isoOrNull(client.expiresAt)),
    revoked: tailscaleTimeOrNull(isoOrNull(client.revokedAt)),
    invalid: client.revokedAt !== null,
    scopes: client.scopes,
    tags: client.tags,
    userId: '',
  };
}

type Caller = Pick<FastifyRequest, 'principal' | 'method'>;

/** An OAuth token needs the scope of the kind it touches: `auth_keys` for keys, `oauth_keys` for clients. */
const requireKind = (request: Caller, resource: TailscaleResource) =>
  requireScope(request.principal!, request.method, 'keys', resource);

const mayRead = (request: Caller, resource: TailscaleResource) =>
  !request.principal!.oauth || allowsCall(request.principal!.oauth.scopes, 'GET', resource);

const clientRequest = (body: ClientRequest) => ({
  scopes: listOrEmpty(body.scopes),
  tags: listOrEmpty(body.tags),
  description: body.description ?? '',
});

/** The longest `expirySeconds`: Warren's longest key lifetime (365 days; Tailscale's is 90). */
const MAX_EXPIRY_SECONDS = MAX_KEY_LIFETIME_MS / 1000;

/** What a caller may not read: frozen, so the list below is still kept for it. */
const NONE = Object.freeze([]) as readonly never[];

/**
 * The key list's body, keys and clients in creation order: made once per kept answer of both
 * (lib/kept.ts) and again when a listed key expires, not per call.
 */
const presentKeysAndClients = keptDerivation(
  ([rows, clients]: readonly [readonly KeyRow[], readonly OAuthClientRow[]], now: number) => {
    const keys = [
      ...rows.map((row) => ({ at: row.created_at, key: presentTailscaleKey(presentKey(row, now), row.revoked_at) })),
      ...clients.map((row) => ({ at: row.created_at, key: presentTailscaleClient(presentClient(row)) })),
    ];
    return { value: { keys: keys.sort((a, b) => a.at - b.at).map((k) => k.key) }, until: firstKeyChange(rows, now) };
  },
);

/**
 * One key's body, as the key list presents it: made once per kept row (lib/kept.ts) and again
 * at the key's expiry, not per call. A revocation, a use or any other change is a new row.
 */
const presentKeptTailscaleKey = keptDerivation(([row]: readonly [KeyRow], now: number) => ({
  value: presentTailscaleKey(presentKey(row, now), row.revoked_at),
  until: keyStateChangesAt(row, now),
}));

export async function tailscaleKeyRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get<{ Params: { tailnet: string }; Querystring: { all?: string | string[] } }>(
    '/tailnet/:tailnet/keys',
    { config, schema: hide },
    async (request) => {
      const networkId = tailnetOf(request);
      const now = ctx.clock.now();
      // As Tailscale: the keys that work; `all=true` adds the expired, revoked and spent ones.
      const all = queryFlag('all', request.query.all);
      const { readStamp } = request.principal!;
      const [rows, clients] = await Promise.all([
        mayRead(request, 'auth_keys')
          ? listKeys(ctx.db, networkId, now, all ? {} : { state: 'valid' }, readStamp)
          : NONE,
        mayRead(request, 'oauth_keys') ? listClients(ctx.db, networkId, all, readStamp) : NONE,
      ]);
      return presentKeysAndClients([rows, clients], now);
    },
  );

  app.post<{ Params: { tailnet: string }; Body: CreateRequest }>(
    '/tailnet/:tailnet/keys',
    { config, schema: { ...hide, body: CreateBody } },
    async (request) => {
      tailnetOf(request);
      const body = request.body;
      const keyType = body.keyType ?? 'auth';
      if (keyType === 'client') {
        requireKind(request, 'oauth_keys');
        const request_ = {
          ...clientRequest(body),
          ...(body.rateLimit !== undefined ? { rateLimit: body.rateLimit } : {}),
        };
        const { client, secret } = await createOAuthClient(ctx, actorOf(request), request_);
        return presentTailscaleClient(client, secret);
      }
      if (keyType !== 'auth') {
        throw invalidRequest(
          `keyType "${keyType}" is not supported: Warren creates auth keys ("auth") and OAuth clients ("client")`,
        );
      }
      if (body.scopes != null || body.tags != null || body.rateLimit !== undefined) {
        throw invalidRequest(
          'scopes, tags and rateLimit are fields of OAuth clients (keyType "client"); an auth key has capabilities',
        );
      }
      // Required by Tailscale's API ("capabilities ... must contain devices", which may be {}):
      // a body without it is a mistake, not a request for a bare single-use key.
      if (!body.capabilities?.devices) {
        throw invalidRequest(
          'an auth key needs capabilities.devices (it may be {}): {"capabilities": {"devices": {"create": {…}}}}',
        );
      }
      requireKind(request, 'auth_keys');
      // Said in this API's terms: the service would name /v1's `expiresIn`.
      if (body.expirySeconds != null && body.expirySeconds > MAX_EXPIRY_SECONDS) {
        throw new ApiError(
          'invalid_duration',
          `expirySeconds may not exceed ${MAX_EXPIRY_SECONDS} (365 days; got ${body.expirySeconds})`,
        );
      }
      const create = body.capabilities.devices.create ?? {};
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

  /** A key or an OAuth client of the caller's network (ids never collide: both are `key_…`). */
  const keyOrClient = async (request: FastifyRequest<{ Params: { tailnet: string; id: string } }>) => {
    const networkId = tailnetOf(request);
    const { id } = request.params;
    const row = await findKey(ctx.db, networkId, id, request.principal!.readStamp);
    if (row) return { row } as const;
    const client = await getOAuthClient(ctx, networkId, id);
    if (client) return { client } as const;
    throw notFound(`key ${id} does not exist`);
  };

  app.get<{ Params: { tailnet: string; id: string } }>(
    '/tailnet/:tailnet/keys/:id',
    { config, schema: hide },
    async (request) => {
      const found = await keyOrClient(request);
      if (found.row) {
        requireKind(request, 'auth_keys');
        return presentKeptTailscaleKey([found.row], ctx.clock.now());
      }
      requireKind(request, 'oauth_keys');
      return presentTailscaleClient(found.client);
    },
  );

  app.put<{ Params: { tailnet: string; id: string }; Body: ClientRequest }>(
    '/tailnet/:tailnet/keys/:id',
    { config, schema: { ...hide, body: SetBody } },
    async (request) => {
      const found = await keyOrClient(request);
      const keyType = request.body.keyType ?? 'client';
      if (found.row || keyType !== 'client') {
        throw invalidRequest('only an OAuth client (keyType "client") can be changed; create a new auth key instead');
      }
      requireKind(request, 'oauth_keys');
      const client = await setOAuthClient(ctx, actorOf(request), found.client.id, clientRequest(request.body));
      return presentTailscaleClient(client);
    },
  );

  app.delete<{ Params: { tailnet: string; id: string } }>(
    '/tailnet/:tailnet/keys/:id',
    { config, schema: hide },
    async (request, reply) => {
      const found = await keyOrClient(request);
      if (found.row) {
        requireKind(request, 'auth_keys');
        await deleteKey(ctx, actorOf(request), found.row.id);
      } else {
        requireKind(request, 'oauth_keys');
        await deleteOAuthClient(ctx, actorOf(request), found.client.id);
      }
      return reply.code(200).send();
    },
  );
}

/**
 * Tailscale's device endpoints over Warren's device services: list (filters applied, not
 * ignored), read, delete, authorize and de-authorize, rename, tags, key expiry, routes. Scopes as on
 * /v1: reads take `read` or `devices`, changes `devices`; an OAuth token needs `devices:core`,
 * or `devices:routes` for routes (their `:read` for reads).
 */

import type { DeviceBody } from '@warren/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../edge/actor.js';
import { keptDerivation } from '../../lib/kept.js';
import { setDeviceAuthorized, updateDevice } from '../../modules/devices/approval.service.js';
import { deviceDetail } from '../../modules/devices/device-details.js';
import { deleteDevice, listDevicesBody, setDeviceTags } from '../../modules/devices/devices.service.js';
import { renameDevice } from '../../modules/devices/rename.service.js';
import { setApprovedRoutes } from '../../modules/routes/approved-set.service.js';
import { invalidRequest } from '../problem.js';
import { deviceFilters } from './device-filters.js';
import { advertisedRoutes, enabledRoutes, presentTailscaleDevice } from './devices.presenter.js';
import { listOrEmpty, tailnetOf } from './tailnet.js';

const config = { scope: 'devices' as const, tailscaleScope: 'devices:core' as const };
/** Tailscale splits devices' scopes; Warren's `devices` covers both. */
const routesConfig = { scope: 'devices' as const, tailscaleScope: 'devices:routes' as const };
const hide = { hide: true };
/**
 * What Tailscale answers a device change with: 200 and an empty JSON object (its documentation
 * says so for authorized, tags, key and name), which a script may parse like any other answer.
 */
const DONE = Object.freeze({});
const Strings = Type.Union([Type.Array(Type.String({ maxLength: 80 }), { maxItems: 256 }), Type.Null()]);
/** Tailscale's bodies may carry more than Warren reads (Go structs, newer clients): accepted. */
const open = { additionalProperties: true } as const;

type ById = FastifyRequest<{ Params: { id: string } }>;

function wantsAll(fields: string | undefined): boolean {
  if (fields === undefined || fields === '' || fields === 'default') return false;
  if (fields === 'all') return true;
  throw invalidRequest(`fields must be "default" or "all" (got "${fields}")`);
}

/** One record in Tailscale's shape, per field set: the kept lists keep each one's JSON by these. */
const tailscaleJson = {
  default: (device: DeviceBody) => JSON.stringify(presentTailscaleDevice(device, false)),
  all: (device: DeviceBody) => JSON.stringify(presentTailscaleDevice(device, true)),
};

/**
 * A device and its routes in Tailscale's shapes, made once per kept detail record (lib/kept.ts):
 * the record already follows the clock, so these hold as long as it is the same record.
 */
const keptShape = {
  default: keptDerivation(([device]: readonly [DeviceBody]) => ({
    value: presentTailscaleDevice(device, false),
    until: Number.POSITIVE_INFINITY,
  })),
  all: keptDerivation(([device]: readonly [DeviceBody]) => ({
    value: presentTailscaleDevice(device, true),
    until: Number.POSITIVE_INFINITY,
  })),
};
const keptRoutes = keptDerivation(([device]: readonly [DeviceBody]) => ({
  value: { advertisedRoutes: advertisedRoutes(device), enabledRoutes: enabledRoutes(device) },
  until: Number.POSITIVE_INFINITY,
}));

export async function tailscaleDeviceRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  /** `stamped`: a read; after this call's own write, its stamp (read before the write) is too old. */
  const detail = (request: ById, stamped = true) =>
    deviceDetail(
      ctx.db,
      request.principal!.networkId,
      request.params.id,
      ctx.clock.now(),
      stamped ? request.principal!.readStamp : undefined,
    );

  app.get<{ Params: { tailnet: string }; Querystring: Record<string, string | string[] | undefined> }>(
    '/tailnet/:tailnet/devices',
    { config, schema: hide },
    async (request, reply) => {
      const networkId = tailnetOf(request);
      const fields = request.query.fields;
      const all = wantsAll(Array.isArray(fields) ? fields.join(',') : fields);
      // Tags select through the kept lists like /v1's (every one must match); the rest are
      // checked on the records, and so name the shape the body is kept by.
      const filters = deviceFilters(request.query);
      const body = await listDevicesBody(
        ctx,
        networkId,
        { tag: filters.tags },
        {
          name: filters.shows ? JSON.stringify(['v2', all, filters.name]) : all ? 'v2-all' : 'v2',
          details: true,
          ...(filters.shows ? { shows: filters.shows } : {}),
          serialize: all ? tailscaleJson.all : tailscaleJson.default,
        },
        request.principal!.readStamp,
      );
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );

  app.get<{ Params: { id: string }; Querystring: { fields?: string } }>(
    '/device/:id',
    { config, schema: hide },
    async (request) => {
      const all = wantsAll(request.query.fields);
      return (all ? keptShape.all : keptShape.default)([await detail(request)], 0);
    },
  );

  app.delete<{ Params: { id: string } }>('/device/:id', { config, schema: hide }, async (request, reply) => {
    await deleteDevice(ctx, actorOf(request), request.params.id);
    return reply.code(200).send();
  });

  app.post<{ Params: { id: string }; Body: { authorized: boolean } }>(
    '/device/:id/authorized',
    { config, schema: { ...hide, body: Type.Object({ authorized: Type.Boolean() }, open) } },
    async (request) => {
      await setDeviceAuthorized(ctx, actorOf(request), request.params.id, request.body.authorized);
      return DONE;
    },
  );

  app.post<{ Params: { id: string }; Body: { tags: string[] | null } }>(
    '/device/:id/tags',
    { config, schema: { ...hide, body: Type.Object({ tags: Strings }, open) } },
    async (request) => {
      await setDeviceTags(ctx, actorOf(request), request.params.id, listOrEmpty(request.body.tags));
      return DONE;
    },
  );

  app.post<{ Params: { id: string }; Body: { name: string | null } }>(
    '/device/:id/name',
    {
      config,
      schema: {
        ...hide,
        body: Type.Object({ name: Type.Union([Type.String({ maxLength: 253 }), Type.Null()]) }, open),
      },
    },
    async (request) => {
      await renameDevice(ctx, actorOf(request), request.params.id, request.body.name ?? '');
      return DONE;
    },
  );

  app.post<{ Params: { id: string }; Body: { keyExpiryDisabled?: boolean | null } }>(
    '/device/:id/key',
    {
      config,
      schema: {
        ...hide,
        body: Type.Object({ keyExpiryDisabled: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])) }, open),
      },
    },
    async (request) => {
      // Optional in Tailscale's API: without it the device's key expiry stays as it is.
      const keyExpiryDisabled = request.body.keyExpiryDisabled ?? undefined;
      await updateDevice(
        ctx,
        actorOf(request),
        request.params.id,
        keyExpiryDisabled === undefined ? {} : { keyExpiryDisabled },
      );
      return DONE;
    },
  );

  app.get<{ Params: { id: string } }>('/device/:id/routes', { config: routesConfig, schema: hide }, async (request) =>
    keptRoutes([await detail(request)], 0),
  );

  app.post<{ Params: { id: string }; Body: { routes: string[] | null } }>(
    '/device/:id/routes',
    { config: routesConfig, schema: { ...hide, body: Type.Object({ routes: Strings }, open) } },
    async (request) => {
      const { id } = request.params;
      await setApprovedRoutes(ctx, actorOf(request), id, listOrEmpty(request.body.routes));
      const device = await detail(request, false);
      return { advertisedRoutes: advertisedRoutes(device), enabledRoutes: enabledRoutes(device) };
    },
  );
}

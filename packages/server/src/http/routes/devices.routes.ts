/** /v1/devices: list (with filters), detail, delete, replace tags, approve, expire, update. */
import {
  DeviceListQuery,
  PatchDeviceBody,
  type PatchDeviceRequest,
  SetTagsBody,
  type SetTagsRequest,
} from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../edge/actor.js';
import { apiSchema, ref } from '../../edge/api-schema.js';
import { approveDevice, expireDevice, updateDevice } from '../../modules/devices/approval.service.js';
import { deviceDetail } from '../../modules/devices/device-details.js';
import {
  type DeviceListInput,
  deleteDevice,
  type ListShape,
  listDevicesBody,
  listDevicesPage,
  setDeviceTags,
  wantsPage,
} from '../../modules/devices/devices.service.js';

/** One device record, as the route's response schema serialises it. */
const DEVICE_SCHEMA = { $ref: 'Device#' };
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const tags = ['devices'];

export async function devicesRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  /** List and detail records, each serialised by the Device schema when it changes (device-records.ts). */
  let shapes: { list: ListShape; details: ListShape } | undefined;

  app.get<{ Querystring: DeviceListInput }>(
    '/devices',
    {
      config: { scope: 'devices' },
      schema: apiSchema(
        {
          operationId: 'listDevices',
          tags,
          summary: 'List devices; user, tag (repeatable, all must match), online, q and fields combine with AND',
          description:
            'Without limit, cursor or q: every device, oldest first. With any of them: pages in name order ' +
            '(limit, default 100; nextCursor continues) with the total the filters select.',
          querystring: DeviceListQuery,
          response: {
            200: Type.Object({
              devices: Type.Array(ref('Device')),
              nextCursor: Type.Optional(Type.Union([Type.String(), Type.Null()])),
              hasMore: Type.Optional(Type.Boolean()),
              total: Type.Optional(Type.Integer()),
            }),
          },
        },
        [400],
      ),
    },
    async (request, reply) => {
      const networkId = request.principal!.networkId;
      if (wantsPage(request.query)) return listDevicesPage(ctx, networkId, request.query);
      if (!shapes) {
        const serialize = reply.compileSerializationSchema(DEVICE_SCHEMA) as (record: object) => string;
        shapes = {
          list: { name: 'v1', details: false, serialize },
          details: { name: 'v1-all', details: true, serialize },
        };
      }
      const shape = request.query.fields === 'all' ? shapes.details : shapes.list;
      const body = await listDevicesBody(ctx, networkId, request.query, shape, request.principal!.readStamp);
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/devices/:id',
    {
      config: { scope: 'devices' },
      schema: apiSchema(
        { operationId: 'getDevice', tags, summary: 'One device', params: IdParams, response: { 200: ref('Device') } },
        [404],
      ),
    },
    async (request) => {
      const { networkId, readStamp } = request.principal!;
      return deviceDetail(ctx.db, networkId, request.params.id, ctx.clock.now(), readStamp);
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/devices/:id',
    {
      config: { scope: 'devices' },
      schema: apiSchema(
        {
          operationId: 'deleteDevice',
          tags,
          summary: 'Remove a device: its credential is refused at once, its routes and addresses are freed',
          params: IdParams,
          response: { 204: Type.Null() },
        },
        [404],
      ),
    },
    async (request, reply) => {
      await deleteDevice(ctx, actorOf(request, 204), request.params.id);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { id: string }; Body: SetTagsRequest }>(
    '/devices/:id/tags',
    {
      config: { scope: 'devices' },
      schema: apiSchema(
        {
          operationId: 'setDeviceTags',
          tags,
          summary: "Replace a device's tags (an empty list clears them)",
          params: IdParams,
          body: SetTagsBody,
          response: { 200: ref('Device') },
        },
        [400, 404],
      ),
    },
    async (request) => setDeviceTags(ctx, actorOf(request), request.params.id, request.body.tags),
  );

  app.patch<{ Params: { id: string }; Body: PatchDeviceRequest }>(
    '/devices/:id',
    {
      config: { scope: 'devices' },
      schema: apiSchema(
        {
          operationId: 'updateDevice',
          tags,
          summary: "Change a device's settings: keyExpiryDisabled (true also lifts an expiry that already happened)",
          params: IdParams,
          body: PatchDeviceBody,
          response: { 200: ref('Device') },
        },
        [400, 404],
      ),
    },
    async (request) => updateDevice(ctx, actorOf(request), request.params.id, request.body),
  );

  app.post<{ Params: { id: string } }>(
    '/devices/:id/approve',
    {
      config: { scope: 'devices' },
      schema: apiSchema(
        {
          operationId: 'approveDevice',
          tags,
          summary: 'Approve a device waiting for approval: it gets its peers and they see it',
          params: IdParams,
          response: { 200: ref('Device') },
        },
        [404, 409],
      ),
    },
    async (request) => approveDevice(ctx, actorOf(request), request.params.id),
  );

  app.post<{ Params: { id: string } }>(
    '/devices/:id/expire',
    {
      config: { scope: 'devices' },
      schema: apiSchema(
        {
          operationId: 'expireDevice',
          tags,
          summary: "End a device's login now: it leaves every netmap until it logs in again",
          params: IdParams,
          response: { 200: ref('Device') },
        },
        [404],
      ),
    },
    async (request) => expireDevice(ctx, actorOf(request), request.params.id),
  );
}

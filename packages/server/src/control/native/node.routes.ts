/**
 * The node protocol's enrollment, presence and netmap: /v1/node/register, /heartbeat,
 * /disconnect, /netmap. These routes skip the API-key hook (`auth: 'node'`): register
 * authenticates the auth key itself, the others the node credential.
 */
import { HeartbeatBody, type HeartbeatRequest, RegisterBody, type RegisterRequest } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../edge/actor.js';
import { apiSchema, ref } from '../../edge/api-schema.js';
import { enroll } from '../../modules/devices/enrollment.service.js';
import { disconnect, heartbeat } from '../../modules/devices/presence.service.js';
import { deviceNetmap, netmapVersion, versionMatches } from '../../modules/netmap/netmap.service.js';
import { authenticateAuthKey, authKeyOf } from './auth-key.js';
import { authenticateDevice } from './node-auth.js';

const tags = ['node'];

/** `?delta=true`: the agent can apply a delta netmap (docs/API.md, node protocol). */
const NetmapQuery = Type.Object({ delta: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])) });

/** The peers changed or removed since the version `If-None-Match` named (`since`). */
const NetmapDelta = Type.Object({
  self: ref('Device'),
  version: Type.Integer(),
  since: Type.Integer(),
  peersChanged: Type.Array(ref('Peer')),
  peersRemoved: Type.Array(Type.String()),
});

export async function nodeRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.post<{ Body: RegisterRequest }>(
    '/node/register',
    {
      config: { auth: 'node' },
      onRequest: authenticateAuthKey,
      schema: apiSchema(
        {
          operationId: 'registerNode',
          tags,
          summary: 'Enroll a device with an auth key (a known nodeKey re-enrolls its device, with a key of its owner)',
          body: RegisterBody,
          response: { 201: Type.Object({ device: ref('Device'), nodeToken: Type.String() }) },
        },
        [400, 409],
      ),
    },
    async (request, reply) => {
      const enrolled = await enroll(ctx, actorOf(request, 201), authKeyOf(request), request.body);
      request.device = {
        networkId: authKeyOf(request).network_id,
        deviceId: enrolled.device.id,
        name: enrolled.device.name,
      };
      return reply.code(201).send({ device: enrolled.device, nodeToken: enrolled.nodeToken });
    },
  );

  app.post<{ Body: HeartbeatRequest }>(
    '/node/heartbeat',
    {
      config: { auth: 'node' },
      onRequest: authenticateDevice,
      schema: apiSchema(
        {
          operationId: 'heartbeat',
          tags,
          summary: 'Mark the device online; optionally report the routes it advertises',
          body: HeartbeatBody,
          response: { 200: Type.Object({ online: Type.Boolean(), netmapVersion: Type.Integer() }) },
        },
        [400],
      ),
    },
    async (request) => {
      await heartbeat(ctx, actorOf(request), request.body);
      // The version of the device's current view, so the agent knows when to fetch its netmap.
      const { networkId, deviceId } = request.device!;
      return { online: true, netmapVersion: await netmapVersion(ctx, networkId, deviceId) };
    },
  );

  app.post(
    '/node/disconnect',
    {
      config: { auth: 'node' },
      onRequest: authenticateDevice,
      // 400: it takes no body, so a field sent to it is unknown (http/bodies.ts).
      schema: apiSchema(
        {
          operationId: 'disconnectNode',
          tags,
          summary: 'Mark the device offline at once',
          response: { 204: Type.Null() },
        },
        [400],
      ),
    },
    async (request, reply) => {
      await disconnect(ctx, actorOf(request));
      return reply.code(204).send();
    },
  );

  app.get<{ Headers: { 'if-none-match'?: string }; Querystring: { delta?: 'true' | 'false' } }>(
    '/node/netmap',
    {
      config: { auth: 'node' },
      onRequest: authenticateDevice,
      schema: apiSchema({
        operationId: 'getNetmap',
        tags,
        summary:
          'The peers this device may reach or be reached by; 304 while If-None-Match holds the version; with delta=true, only the peers changed since it when the server still knows it',
        headers: Type.Object({ 'if-none-match': Type.Optional(Type.String()) }),
        querystring: NetmapQuery,
        response: {
          200: {
            description: 'the netmap, or with delta=true a delta (it has `since`); header ETag: its version, quoted',
            headers: { ETag: { type: 'string' } },
            content: { 'application/json': { schema: Type.Union([ref('Netmap'), NetmapDelta]) } },
          },
          304: Type.Null({ description: 'unchanged since that version' }),
        },
      }),
    },
    async (request, reply) => {
      const { networkId, deviceId } = request.device!;
      const ifNoneMatch = request.headers['if-none-match'];
      const netmap = await deviceNetmap(ctx, networkId, deviceId, ifNoneMatch, request.query.delta === 'true');
      reply.header('etag', `"${netmap.version}"`);
      if (netmap.body === undefined || versionMatches(ifNoneMatch, netmap.version)) return reply.code(304).send();
      return reply.type('application/json; charset=utf-8').send(netmap.body);
    },
  );
}

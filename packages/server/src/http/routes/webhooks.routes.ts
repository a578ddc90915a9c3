/** /v1/webhooks: endpoints (CRUD), secret rotation, test events, deliveries and retries. */
import {
  CreateWebhookBody,
  type CreateWebhookRequest,
  DeliveryListQuery,
  type DeliveryListRequest,
  PatchWebhookBody,
  type PatchWebhookRequest,
} from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../../core/errors.js';
import { actorOf } from '../../edge/actor.js';
import { apiSchema, created, logPageSchema, ref } from '../../edge/api-schema.js';
import { deliveryPage } from '../../modules/webhooks/deliveries.js';
import { presentWebhook } from '../../modules/webhooks/webhooks.presenter.js';
import { findWebhook, listWebhooks } from '../../modules/webhooks/webhooks.repository.js';
import {
  createWebhook,
  deleteWebhook,
  retryDelivery,
  rotateSecret,
  testWebhook,
  updateWebhook,
} from '../../modules/webhooks/webhooks.service.js';

const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const DeliveryParams = Type.Object({ id: Type.String({ maxLength: 64 }), deliveryId: Type.String({ maxLength: 64 }) });
const Accepted = Type.Object({ accepted: Type.Boolean() });
const tags = ['webhooks'];
const config = { scope: 'webhooks' } as const;

export async function webhooksRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get(
    '/webhooks',
    {
      config,
      schema: apiSchema({
        operationId: 'listWebhooks',
        tags,
        summary: 'List the webhook endpoints',
        response: { 200: Type.Object({ webhooks: Type.Array(ref('Webhook')) }) },
      }),
    },
    async (request) => ({
      webhooks: (await listWebhooks(ctx.db, request.principal!.networkId, request.principal!.readStamp)).map((row) =>
        presentWebhook(row),
      ),
    }),
  );

  app.post<{ Body: CreateWebhookRequest }>(
    '/webhooks',
    {
      config,
      schema: apiSchema(
        {
          operationId: 'createWebhook',
          tags,
          summary: 'Add a webhook endpoint (its signing secret is in this response only)',
          body: CreateWebhookBody,
          response: { 201: created('Webhook', '/v1/webhooks/{id}') },
        },
        [403],
      ),
    },
    async (request, reply) => {
      const webhook = await createWebhook(ctx, actorOf(request, 201), request.body);
      return reply.code(201).header('location', `/v1/webhooks/${webhook.id}`).send(webhook);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/webhooks/:id',
    {
      config,
      schema: apiSchema(
        {
          operationId: 'getWebhook',
          tags,
          summary: 'Read a webhook endpoint',
          params: IdParams,
          response: { 200: ref('Webhook') },
        },
        [404],
      ),
    },
    async (request) => {
      const row = await findWebhook(
        ctx.db,
        request.principal!.networkId,
        request.params.id,
        request.principal!.readStamp,
      );
      if (!row) throw notFound(`webhook ${request.params.id} does not exist`);
      return presentWebhook(row);
    },
  );

  app.patch<{ Params: { id: string }; Body: PatchWebhookRequest }>(
    '/webhooks/:id',
    {
      config,
      schema: apiSchema(
        {
          operationId: 'updateWebhook',
          tags,
          summary: 'Change the URL, events, description, or enable or disable the endpoint',
          params: IdParams,
          body: PatchWebhookBody,
          response: { 200: ref('Webhook') },
        },
        [404],
      ),
    },
    async (request) => updateWebhook(ctx, actorOf(request), request.params.id, request.body),
  );

  app.delete<{ Params: { id: string } }>(
    '/webhooks/:id',
    {
      config,
      schema: apiSchema(
        {
          operationId: 'deleteWebhook',
          tags,
          summary: 'Remove a webhook endpoint',
          params: IdParams,
          response: { 204: Type.Null() },
        },
        [404],
      ),
    },
    async (request, reply) => {
      await deleteWebhook(ctx, actorOf(request, 204), request.params.id);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { id: string } }>(
    '/webhooks/:id/rotate',
    {
      config,
      schema: apiSchema(
        {
          operationId: 'rotateWebhookSecret',
          tags,
          summary: 'A new signing secret (shown once); the old one keeps signing beside it for 24 hours',
          params: IdParams,
          response: { 200: Type.Object({ secret: Type.String() }) },
        },
        [404],
      ),
    },
    async (request) => rotateSecret(ctx, actorOf(request), request.params.id),
  );

  app.post<{ Params: { id: string } }>(
    '/webhooks/:id/test',
    {
      config,
      schema: apiSchema(
        {
          operationId: 'testWebhook',
          tags,
          summary: 'Send a webhook.test event to this endpoint (409 when it is disabled)',
          params: IdParams,
          response: { 202: Accepted },
        },
        [404, 409],
      ),
    },
    async (request, reply) => {
      await testWebhook(ctx, actorOf(request, 202), request.params.id);
      return reply.code(202).send({ accepted: true });
    },
  );

  app.get<{ Params: { id: string }; Querystring: DeliveryListRequest }>(
    '/webhooks/:id/deliveries',
    {
      config,
      schema: apiSchema(
        {
          operationId: 'listWebhookDeliveries',
          tags,
          summary: 'Page through the deliveries of an endpoint (ascending; tail with nextCursor)',
          params: IdParams,
          querystring: DeliveryListQuery,
          response: { 200: logPageSchema('WebhookDelivery') },
        },
        [404],
      ),
    },
    async (request) =>
      deliveryPage(ctx, request.principal!.networkId, request.params.id, request.query, request.principal!.readStamp),
  );

  app.post<{ Params: { id: string; deliveryId: string } }>(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      config,
      schema: apiSchema(
        {
          operationId: 'retryWebhookDelivery',
          tags,
          summary: 'Deliver again now',
          params: DeliveryParams,
          response: { 202: Accepted },
        },
        [404, 409],
      ),
    },
    async (request, reply) => {
      await retryDelivery(ctx, actorOf(request, 202), request.params.id, request.params.deliveryId);
      return reply.code(202).send({ accepted: true });
    },
  );
}

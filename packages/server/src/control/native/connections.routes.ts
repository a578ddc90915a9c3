/**
 * `POST /v1/node/connections`: a device reports its connections (node credential), all of a
 * batch stored or none of it. API keys read the log through http/routes/connections.routes.ts.
 */
import { ConnectionsBody, type ConnectionsRequest } from '@warren/contract';
import type { FastifyInstance, FastifySchemaValidationError } from 'fastify';
import { Type } from 'typebox';
import { ApiError, invalidRequest } from '../../core/errors.js';
import { apiSchema } from '../../edge/api-schema.js';
import { toApiError } from '../../edge/to-api-error.js';
import { reportConnections } from '../../modules/logs/connections.service.js';
import { authenticateDevice } from './node-auth.js';

const ENTRY_PATH = /^\/entries\/(\d+)(?:\/(.*))?$/;

/**
 * A schema error inside one entry names it, like the service's own checks do: Ajv stops at
 * the first error and checks items in order, so it is the first bad entry of the batch.
 */
export function batchSchemaError(error: Error & { validation?: FastifySchemaValidationError[] }): ApiError {
  const first = error.validation?.[0];
  const match = ENTRY_PATH.exec(first?.instancePath ?? '');
  if (!first || !match) return toApiError(error as Parameters<typeof toApiError>[0]);
  const index = Number(match[1]);
  const field = match[2]?.replaceAll('/', '.');
  const stored = 'nothing of this batch was stored';
  if (first.keyword === 'additionalProperties') {
    const name = String((first.params as { additionalProperty?: string }).additionalProperty);
    const path = field ? `${field}.${name}` : name;
    return new ApiError('unknown_field', `entries[${index}]: unknown field "${path}"; ${stored}`, { index });
  }
  const subject = field ? `entries[${index}]: field "${field}"` : `entries[${index}]`;
  return invalidRequest(`${subject} ${first.message ?? 'is invalid'}; ${stored}`, { index });
}

export async function connectionReportRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.post<{ Body: ConnectionsRequest }>(
    '/node/connections',
    {
      config: { auth: 'node' },
      onRequest: authenticateDevice,
      attachValidation: true,
      schema: apiSchema(
        {
          operationId: 'reportConnections',
          tags: ['node'],
          summary: 'Report up to 1,000 connections of this device (all stored, or none)',
          description:
            'Node credential. The source of every entry is the reporting device; the destination device is ' +
            'resolved from the address. A bad entry refuses the whole batch with a 400 whose `index` names it.',
          body: ConnectionsBody,
          response: { 202: Type.Object({ accepted: Type.Integer() }) },
        },
        [400, 413, 415],
      ),
    },
    async (request, reply) => {
      if (request.validationError) throw batchSchemaError(request.validationError);
      const accepted = await reportConnections(ctx, request.device!, request.body.entries);
      return reply.code(202).send({ accepted });
    },
  );
}

/**
 * GET /v1/logs/audit: the audit log of the caller's network, keyset-paged like connections;
 * `changes=true` keeps only the calls that changed state.
 */
import { type AuditEntryBody, AuditLogQuery, type AuditLogRequest } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import type { Selectable } from 'kysely';
import { apiSchema, logPageSchema } from '../../edge/api-schema.js';
import type { LogIds } from '../../lib/log-ids.js';
import { iso } from '../../lib/time.js';
import { readPage } from '../../modules/logs/paging.js';
import type { AuditLogTable } from '../../storage/schema.js';

function presentAudit(ids: LogIds, row: Selectable<AuditLogTable>): AuditEntryBody {
  return {
    id: ids.id('audit', Number(row.seq)),
    time: iso(row.time),
    keyId: row.key_id,
    keyName: row.key_name,
    deviceId: row.device_id,
    method: row.method,
    path: row.path,
    status: row.status,
    clientAddr: row.client_addr,
    requestId: row.request_id,
    action: row.action,
    target: row.target,
    userId: row.user_id,
    userLogin: row.user_login,
  };
}

export async function auditLogRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.get<{ Querystring: AuditLogRequest }>(
    '/logs/audit',
    {
      config: { scope: 'read' },
      schema: apiSchema(
        {
          operationId: 'listAuditLog',
          tags: ['logs'],
          summary: 'Page through the audit log (ascending; tail with nextCursor); key and changes filter it',
          querystring: AuditLogQuery,
          response: { 200: logPageSchema('AuditEntry') },
        },
        [400],
      ),
    },
    async (request) => {
      const networkId = request.principal!.networkId;
      const { key } = request.query;
      const changesOnly = request.query.changes === 'true';
      // Entries of calls this instance has answered so far become visible to the caller.
      await ctx.audit.settled();
      const fetch = (afterSeq: number, rows: number) => {
        let query = ctx.db
          .selectFrom('audit_log')
          .selectAll()
          .where('network_id', '=', networkId)
          .where('seq', '>', afterSeq);
        if (key) query = query.where('key_id', '=', key);
        // Served by the partial index of changes (migration 020), not a scan of every read.
        if (changesOnly) query = query.where('action', 'is not', null);
        return query.orderBy('seq').limit(rows).execute();
      };
      const present = (row: Selectable<AuditLogTable>) => presentAudit(ctx.logIds, row);
      return readPage(ctx, 'audit_log', networkId, request.query, ctx.clock.now(), fetch, present);
    },
  );
}

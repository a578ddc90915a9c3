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
import { KeptPages } from '../../modules/logs/kept-pages.js';
import { fullPage, pagePosition, readPage } from '../../modules/logs/paging.js';
import { isPostgres } from '../../storage/database.js';
import type { AuditLogTable } from '../../storage/schema.js';

const JSON_TYPE = 'application/json; charset=utf-8';

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
  const schema = logPageSchema('AuditEntry');
  let serialize: ((page: object) => string) | undefined;
  const kept = isPostgres(ctx.db) ? undefined : new KeptPages();
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
          response: { 200: schema },
        },
        [400],
      ),
    },
    async (request, reply) => {
      const networkId = request.principal!.networkId;
      const { key } = request.query;
      const changesOnly = request.query.changes === 'true';
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
      const now = ctx.clock.now();
      const start = await pagePosition(ctx, 'audit_log', networkId, request.query, now);
      // Entries still queued by this instance will be numbered after every entry committed
      // now, so a page read full cannot miss them: only a page that reaches the log's end
      // waits for them. One in flight may already hold a number, so it is waited for.
      if (!start.exhausted && !ctx.audit.writing) {
        const pageKey = `${networkId}\u0000${start.afterSeq}\u0000${start.limit}\u0000${changesOnly}\u0000${key ?? ''}`;
        const hit = kept?.get(pageKey);
        if (hit) return reply.type(JSON_TYPE).send(hit);
        const rows = await fetch(start.afterSeq, start.limit + 1);
        const page = fullPage(ctx.logIds, 'audit_log', rows, start.limit, present, start.afterSeq);
        if (page) {
          serialize ??= reply.compileSerializationSchema(schema as unknown as Record<string, unknown>) as (
            page: object,
          ) => string;
          const body = Buffer.from(serialize(page));
          kept?.keep(pageKey, body);
          return reply.type(JSON_TYPE).send(body);
        }
      }
      // Entries of calls this instance has answered so far become visible to the caller.
      await ctx.audit.settled();
      return readPage(ctx, 'audit_log', networkId, request.query, now, fetch, present);
    },
  );
}

/**
 * Reading the audit log: `GET /v1/logs/audit`, keyset-paged like the other logs; `key` keeps one
 * key's calls, `changes` only the calls that changed state. Its queries are built once per
 * filter shape (storage/compiled-query.ts) and its full pages kept (kept-pages.ts).
 */
import type { AuditEntryBody, AuditLogRequest } from '@warren/contract';
import type { Selectable } from 'kysely';
import type { AppContext } from '../../core/context.js';
import type { LogIds } from '../../lib/log-ids.js';
import { iso } from '../../lib/time.js';
import type { Db } from '../../storage/database.js';
import type { AuditLogTable } from '../../storage/schema.js';
import { LogPages, type LogQueryParams, logQueries, type PageBody } from './kept-pages.js';
import type { LogPage } from './paging.js';

type AuditRow = Selectable<AuditLogTable>;

function presentAudit(ids: LogIds, row: AuditRow): AuditEntryBody {
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

interface Filter {
  key: boolean;
  changes: boolean;
}

const shapeOf = (filter: Filter) => `${filter.key}:${filter.changes}`;

/** The network's entries the filters keep: the part every query of the log shares. */
function filtered(db: Db, filter: Filter, p: LogQueryParams) {
  let query = db.selectFrom('audit_log').where('network_id', '=', p.networkId as string);
  if (filter.key) query = query.where('key_id', '=', p.key as string);
  // Served by the partial index of changes (migration 020), not a scan of every read.
  if (filter.changes) query = query.where('action', 'is not', null);
  return query;
}

const auditQuery = logQueries('audit_log', shapeOf, filtered);

/** The audit log's pages, for one server: their kept bodies live here. */
export function auditPages(ctx: Pick<AppContext, 'db' | 'logIds' | 'audit' | 'clock'>) {
  // Entries of calls this instance has answered are written in batches: a page that reaches
  // the log's end waits until they can be read. A full page cannot miss them, as they will be
  // numbered after every entry committed now.
  const pages = new LogPages(ctx, 'audit_log', { removable: false, settle: () => ctx.audit.settled() });
  const present = (row: AuditRow) => presentAudit(ctx.logIds, row);
  return (
    networkId: string,
    request: AuditLogRequest,
    serialize: (page: LogPage<AuditEntryBody>) => string,
  ): Promise<PageBody> => {
    const filter = { key: request.key !== undefined, changes: request.changes === 'true' };
    const params: LogQueryParams = request.key === undefined ? { networkId } : { networkId, key: request.key };
    const query = auditQuery(ctx.db, filter, params, `${filter.changes}\u0000${request.key ?? ''}`, present);
    return pages.read(networkId, request, ctx.clock.now(), query, serialize);
  };
}

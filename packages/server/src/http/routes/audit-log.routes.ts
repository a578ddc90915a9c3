/**
 * GET /v1/logs/audit: the audit log of the caller's network, keyset-paged like connections;
 * `changes=true` keeps only the calls that changed state (modules/logs/audit-pages.ts).
 */
import { AuditLogQuery } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { auditPages } from '../../modules/logs/audit-pages.js';
import { logPageRoute } from '../log-page-route.js';

export async function auditLogRoutes(app: FastifyInstance): Promise<void> {
  logPageRoute(app, {
    url: '/logs/audit',
    entry: 'AuditEntry',
    operationId: 'listAuditLog',
    tag: 'logs',
    summary: 'Page through the audit log (ascending; tail with nextCursor); key and changes filter it',
    querystring: AuditLogQuery,
    pages: auditPages(app.ctx),
  });
}

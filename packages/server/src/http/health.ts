/** Probes: /healthz (the process is up) and /readyz (the database answers). No key needed. */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { ApiError } from './problem.js';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  const hidden = { hide: true };
  app.get('/healthz', { config: { auth: 'none' }, schema: hidden }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { auth: 'none' }, schema: hidden }, async () => {
    try {
      await sql`select 1`.execute(app.ctx.db);
    } catch {
      throw new ApiError('unavailable', 'the database is not reachable');
    }
    return { status: 'ready' };
  });
}

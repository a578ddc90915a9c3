/**
 * A state change and its audit entry, committed together: if either fails, neither
 * happens, so a failed request changes nothing.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { Db } from '../storage/database.js';

export interface Changed<T> {
  value: T;
  action: string;
  target: string | null;
}

export async function applyChange<T>(
  ctx: AppContext,
  request: FastifyRequest,
  status: number,
  run: (trx: Db, now: number) => Promise<Changed<T>>,
): Promise<T> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const { value, action, target } = await run(trx, now);
    await ctx.audit.recordChange(trx, request, now, { action, target, status });
    return value;
  });
}

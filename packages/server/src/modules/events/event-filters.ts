/** The SQL twin of matchesFilters (core/events.ts): exact types, families (`device.*`) and `*`. */
import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../../storage/schema.js';

export function typeFilter(eb: ExpressionBuilder<Database, 'events'>, filters: readonly string[]) {
  if (filters.length === 0 || filters.includes('*')) return eb.lit(true);
  const exact = filters.filter((filter) => !filter.endsWith('.*'));
  const families = filters.filter((filter) => filter.endsWith('.*')).map((filter) => `${filter.slice(0, -1)}%`);
  return eb.or([
    ...(exact.length > 0 ? [eb('type', 'in', exact)] : []),
    ...families.map((family) => eb('type', 'like', family)),
  ]);
}

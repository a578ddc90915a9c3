/**
 * Makes the database refuse some inserts into a table, the way a full disk or a broken
 * constraint would: a trigger that raises. Tests use it to prove that a change whose audit
 * entry or event cannot be written rolls back.
 */
import { sql } from 'kysely';
import type { Db } from '../../src/storage/database.js';
import { backend } from '../harness.js';

/** `condition` is SQL over NEW (e.g. `new.action = 'user.create'`). */
export async function refuseInserts(db: Db, table: string, condition: string): Promise<() => Promise<void>> {
  const name = `refuse_${table}`;
  if (backend === 'postgres') {
    await sql
      .raw(
        `create function ${name}() returns trigger language plpgsql as $$ begin raise exception 'refused by test'; end $$;
         create trigger ${name} before insert on ${table} for each row when (${condition}) execute function ${name}();`,
      )
      .execute(db);
    return async () => {
      await sql.raw(`drop trigger ${name} on ${table}; drop function ${name}();`).execute(db);
    };
  }
  await sql
    .raw(
      `create trigger ${name} before insert on ${table} when ${condition} begin select raise(abort, 'refused by test'); end`,
    )
    .execute(db);
  return async () => {
    await sql.raw(`drop trigger ${name}`).execute(db);
  };
}

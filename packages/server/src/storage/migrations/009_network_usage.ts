/**
 * `networks.device_count` and `networks.user_count`: the usage `GET /v1/network` reports and
 * plan limits are checked against. Counting rows on every call cost a scan of the network's
 * index (about 0.4 ms at 10,000 devices, more than the rest of the call); the counts are kept
 * by triggers instead, so every way a row comes or goes (enrollment, deletion, a cascade from
 * a removed user, SCIM) moves them in the same transaction, and no code path can forget to.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

const COUNTED = [
  { table: 'devices', column: 'device_count' },
  { table: 'users', column: 'user_count' },
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const { table, column } of COUNTED) {
    await db.schema
      .alterTable('networks')
      .addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`update networks set ${sql.ref(column)} = (select count(*) from ${sql.table(table)} t where t.network_id = networks.id)`.execute(
      db,
    );
    if (postgres) await countWithPostgresTriggers(db, table, column);
    else await countWithSqliteTriggers(db, table, column);
  }
}

async function countWithSqliteTriggers(db: Kysely<unknown>, table: string, column: string): Promise<void> {
  await sql
    .raw(
      `create trigger ${table}_counted_insert after insert on ${table} begin
         update networks set ${column} = ${column} + 1 where id = new.network_id;
       end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger ${table}_counted_delete after delete on ${table} begin
         update networks set ${column} = ${column} - 1 where id = old.network_id;
       end`,
    )
    .execute(db);
}

async function countWithPostgresTriggers(db: Kysely<unknown>, table: string, column: string): Promise<void> {
  await sql
    .raw(
      `create function ${table}_counted() returns trigger language plpgsql as $$
       begin
         if tg_op = 'INSERT' then
           update networks set ${column} = ${column} + 1 where id = new.network_id;
         else
           update networks set ${column} = ${column} - 1 where id = old.network_id;
         end if;
         return null;
       end $$`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger ${table}_counted after insert or delete on ${table} for each row execute function ${table}_counted()`,
    )
    .execute(db);
}

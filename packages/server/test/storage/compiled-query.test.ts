import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledQuery, compiledShapes } from '../../src/storage/compiled-query.js';
import { openStorage } from '../../src/storage/database.js';
import { backend, freshDatabase, type TestDatabase } from '../harness.js';

describe('compiledQuery', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
    await database.storage.db
      .insertInto('networks')
      .values([
        { id: 'net_a', name: 'a', plan: 'free', created_at: 1, next_addr_index: 1, netmap_epoch: 0 },
        { id: 'net_b', name: 'b', plan: 'premium', created_at: 2, next_addr_index: 1, netmap_epoch: 0 },
      ])
      .execute();
  });
  afterAll(() => database.drop());

  const byNameAndPlan = compiledQuery((db, p: { name: string; plan: string }) =>
    db
      .selectFrom('networks')
      .select(['id'])
      .where('name', '=', p.name)
      .where('plan', '=', p.plan)
      .where('created_at', '>', 0),
  );

  it('binds each call its own values, fixed values included', async () => {
    expect(await byNameAndPlan(database.storage.db, { name: 'a', plan: 'free' })).toEqual([{ id: 'net_a' }]);
    expect(await byNameAndPlan(database.storage.db, { name: 'b', plan: 'premium' })).toEqual([{ id: 'net_b' }]);
    expect(await byNameAndPlan(database.storage.db, { name: 'a', plan: 'premium' })).toEqual([]);
  });

  it('never reads what an open transaction has not committed, on any dialect', async () => {
    // On SQLite a compiled query outside a transaction runs at once on the writing connection;
    // while a transaction is open there it must not run on it, or it would read rows that are
    // about to be rolled back.
    let seen: unknown[] | undefined;
    await expect(
      database.storage.db.transaction().execute(async (trx) => {
        await trx.updateTable('networks').set({ plan: 'free' }).where('id', '=', 'net_b').execute();
        void byNameAndPlan(database.storage.db, { name: 'b', plan: 'free' }).then((rows) => {
          seen = rows;
        });
        await new Promise((resolve) => setTimeout(resolve, 20));
        // SQLite answers from its read-only connection at once rather than after the transaction.
        if (backend === 'sqlite') expect(seen).toEqual([]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual([]);
  });

  it('runs inside a transaction on its connection', async () => {
    await database.storage.db.transaction().execute(async (trx) => {
      await trx.updateTable('networks').set({ plan: 'free' }).where('id', '=', 'net_b').execute();
      expect(await byNameAndPlan(trx, { name: 'b', plan: 'free' })).toEqual([{ id: 'net_b' }]);
      await trx.updateTable('networks').set({ plan: 'premium' }).where('id', '=', 'net_b').execute();
    });
  });

  it.runIf(backend === 'postgres')(
    'runs as a named statement on PostgreSQL, prepared once per connection',
    async () => {
      // One connection, so the session whose prepared statements are listed is the one that ran them.
      const single = await openStorage(database.url, { schema: database.schema, poolSize: 1 });
      try {
        const byName = compiledQuery((db, p: { name: string }) =>
          db.selectFrom('networks').select('id').where('name', '=', p.name),
        );
        expect(await byName(single.db, { name: 'a' })).toEqual([{ id: 'net_a' }]);
        expect(await byName(single.db, { name: 'b' })).toEqual([{ id: 'net_b' }]);
        const { rows } = await sql<{ name: string; statement: string }>`
        select name, statement from pg_prepared_statements where statement like '%"networks"%'`.execute(single.db);
        expect(rows).toHaveLength(1);
        expect(rows[0]!.name).toMatch(/^warren_\d+$/);
      } finally {
        await single.close();
      }
    },
  );

  it('refuses a parameter that does not become a value of the SQL', async () => {
    const unused = compiledQuery((db, _p: { id: string }) => db.selectFrom('networks').select('id'));
    await expect(unused(database.storage.db, { id: 'net_a' })).rejects.toThrow(/parameter "id" is not used/);
    const derived = compiledQuery((db, p: { name: string }) =>
      db.selectFrom('networks').select('id').where('name', 'like', `${p.name}%`),
    );
    await expect(derived(database.storage.db, { name: 'a' })).rejects.toThrow(/built from a parameter/);
  });

  it('builds a query once per shape, each shape with its own filters', async () => {
    let built = 0;
    const networksOf = compiledShapes(
      (filter: { plan: boolean }) => (filter.plan ? 'plan' : 'all'),
      (filter) => (db, p: Record<string, string>) => {
        built++;
        let query = db.selectFrom('networks').select('id').where('created_at', '>', 0);
        if (filter.plan) query = query.where('plan', '=', p.plan as string);
        return query.orderBy('id');
      },
    );
    const db = database.storage.db;
    expect(await networksOf({ plan: false })(db, {})).toEqual([{ id: 'net_a' }, { id: 'net_b' }]);
    expect(await networksOf({ plan: true })(db, { plan: 'free' })).toEqual([{ id: 'net_a' }]);
    expect(await networksOf({ plan: true })(db, { plan: 'premium' })).toEqual([{ id: 'net_b' }]);
    expect(await networksOf({ plan: false })(db, {})).toHaveLength(2);
    // Each shape's builder ran once, when that shape was first asked for.
    expect(built).toBe(2);
  });
});

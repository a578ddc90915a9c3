import { subscribe, unsubscribe } from 'node:diagnostics_channel';
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
    let read: Promise<unknown> | undefined;
    await expect(
      database.storage.db.transaction().execute(async (trx) => {
        await trx.updateTable('networks').set({ plan: 'free' }).where('id', '=', 'net_b').execute();
        read = byNameAndPlan(database.storage.db, { name: 'b', plan: 'free' }).then((rows) => {
          seen = rows;
        });
        await new Promise((resolve) => setTimeout(resolve, 20));
        // SQLite answers from its read-only connection at once rather than after the transaction.
        if (backend === 'sqlite') expect(seen).toEqual([]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    // However long the read takes (PostgreSQL's pool on a loaded machine), it saw no uncommitted row.
    await read;
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

  describe('answers kept until the next commit', () => {
    const nameOf = compiledQuery((db, p: { id: string }) =>
      db.selectFrom('networks').select('name').where('id', '=', p.id),
    );
    /** The next turn of the event loop, in which another process's commit shows. */
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    const kept = backend === 'sqlite';

    it('serves a select again without running it until anything commits, by this process or another', async () => {
      const db = database.storage.db;
      const other = await openStorage(database.url, database.schema ? { schema: database.schema } : {});
      try {
        const first = await nameOf(db, { id: 'net_a' });
        expect(first).toEqual([{ name: 'a' }]);
        // The same array: no statement ran. PostgreSQL has no commit counter, so it always reads.
        expect((await nameOf(db, { id: 'net_a' })) === first).toBe(kept);
        await db.updateTable('networks').set({ name: 'a2' }).where('id', '=', 'net_a').execute();
        expect(await nameOf(db, { id: 'net_a' })).toEqual([{ name: 'a2' }]);
        // Another process's commit shows from the next turn of the event loop.
        await other.db.updateTable('networks').set({ name: 'a3' }).where('id', '=', 'net_a').execute();
        await nextTurn();
        expect(await nameOf(db, { id: 'net_a' })).toEqual([{ name: 'a3' }]);
        // A commit of anything else, too: the counter says only that something committed.
        const before = await nameOf(db, { id: 'net_a' });
        await other.db
          .updateTable('networks')
          .set((eb) => ({ next_addr_index: eb('next_addr_index', '+', 1) }))
          .where('id', '=', 'net_b')
          .execute();
        await nextTurn();
        expect((await nameOf(db, { id: 'net_a' })) === before).toBe(false);
      } finally {
        await db.updateTable('networks').set({ name: 'a' }).where('id', '=', 'net_a').execute();
        await other.close();
      }
    });

    // SQLite compares 1 and '1' as different values; PostgreSQL types the parameter itself.
    it.runIf(kept)("keeps each call's values apart, their types included", async () => {
      const echo = compiledQuery((db, p: { v: string | number | null }) =>
        db.selectNoFrom((eb) => eb.val(p.v).as('v')),
      );
      const db = database.storage.db;
      expect(await echo(db, { v: 1 })).toEqual([{ v: 1 }]);
      expect(await echo(db, { v: '1' })).toEqual([{ v: '1' }]);
      expect(await echo(db, { v: '' })).toEqual([{ v: '' }]);
      expect(await echo(db, { v: null })).toEqual([{ v: null }]);
    });

    it.runIf(kept)('reads once for calls made together right after a commit', async () => {
      const db = database.storage.db;
      await db.updateTable('networks').set({ name: 'a' }).where('id', '=', 'net_a').execute();
      // Started together, as heartbeats answered by one commit resume: the first call's answer
      // must be kept before the others look, not after it has yielded.
      const answers = await Promise.all(Array.from({ length: 8 }, () => nameOf(db, { id: 'net_a' })));
      for (const answer of answers) expect(answer).toBe(answers[0]);
    });

    it.runIf(kept)("freezes what it keeps, so no caller can change another's answer", async () => {
      const rows = await nameOf(database.storage.db, { id: 'net_b' });
      expect(() => {
        (rows[0] as { name: string }).name = 'changed';
      }).toThrow(TypeError);
      expect(() => (rows as { name: string }[]).push({ name: 'more' })).toThrow(TypeError);
      expect(await nameOf(database.storage.db, { id: 'net_b' })).toEqual([{ name: 'b' }]);
    });

    it('never keeps a write', async () => {
      const bump = compiledQuery((db, p: { id: string }) =>
        db
          .updateTable('networks')
          .set((eb) => ({ next_addr_index: eb('next_addr_index', '+', 1) }))
          .where('id', '=', p.id)
          .returning('next_addr_index'),
      );
      const db = database.storage.db;
      const [first] = await bump(db, { id: 'net_b' });
      const [second] = await bump(db, { id: 'net_b' });
      expect(second!.next_addr_index).toBe(first!.next_addr_index + 1);
    });
  });

  describe.runIf(backend === 'postgres')('answers kept per read stamp (PostgreSQL)', () => {
    const nameOf = compiledQuery(
      (db, p: { id: string }) => db.selectFrom('networks').select(['id', 'name']).where('id', '=', p.id),
      { stampedBy: 'id', name: 'network name' },
    );
    const stampOf = async (networkId: string) => {
      const row = await database.storage.db
        .selectFrom('read_stamps')
        .select('seq')
        .where('network_id', '=', networkId)
        .executeTakeFirstOrThrow();
      return { networkId, seq: Number(row.seq) };
    };

    it('serves an answer again to calls that bring the same stamp of its network, and only to them', async () => {
      const { db } = database.storage;
      const stamp = await stampOf('net_a');
      const first = await nameOf(db, { id: 'net_a' }, stamp);
      expect(first).toEqual([{ id: 'net_a', name: 'a' }]);
      expect(await nameOf(db, { id: 'net_a' }, stamp)).toBe(first);
      // No stamp, or the stamp of another network: the statement runs.
      expect(await nameOf(db, { id: 'net_a' })).not.toBe(first);
      expect(await nameOf(db, { id: 'net_a' }, { networkId: 'net_b', seq: stamp.seq })).not.toBe(first);
      // A rename moves the stamp in its own transaction; a call bringing the new one reads it.
      await db.updateTable('networks').set({ name: 'a2' }).where('id', '=', 'net_a').execute();
      const moved = await stampOf('net_a');
      expect(moved.seq).toBeGreaterThan(stamp.seq);
      const renamed = await nameOf(db, { id: 'net_a' }, moved);
      expect(renamed).toEqual([{ id: 'net_a', name: 'a2' }]);
      expect(await nameOf(db, { id: 'net_a' }, moved)).toBe(renamed);
      // A late call with the older stamp reads for itself and leaves the newer answer kept.
      expect(await nameOf(db, { id: 'net_a' }, stamp)).not.toBe(renamed);
      expect(await nameOf(db, { id: 'net_a' }, moved)).toBe(renamed);
      await db.updateTable('networks').set({ name: 'a' }).where('id', '=', 'net_a').execute();
    });

    it('reads a moved stamp once for the calls that bring it together', async () => {
      const { db } = database.storage;
      let sent = 0;
      const listener = (message: unknown) => {
        if ((message as { query: string }).query === 'network name') sent++;
      };
      subscribe('warren:compiled-query:read', listener);
      try {
        await db.updateTable('networks').set({ name: 'a3' }).where('id', '=', 'net_a').execute();
        const moved = await stampOf('net_a');
        const answers = await Promise.all([1, 2, 3, 4, 5].map(() => nameOf(db, { id: 'net_a' }, moved)));
        // The first call's statement, then one for the four that missed while it was in flight.
        expect(sent).toBeLessThanOrEqual(2);
        for (const answer of answers) expect(answer).toEqual([{ id: 'net_a', name: 'a3' }]);
        expect(await nameOf(db, { id: 'net_a' }, moved)).toBe(answers[4]);
      } finally {
        unsubscribe('warren:compiled-query:read', listener);
        await db.updateTable('networks').set({ name: 'a' }).where('id', '=', 'net_a').execute();
      }
    });

    it('moves the stamp with what the stamped reads show, not with the fleet', async () => {
      const { db } = database.storage;
      const start = (await stampOf('net_b')).seq;
      // Epochs and the address counter move with enrollments and presence: not shown by the reads.
      await db
        .updateTable('networks')
        .set((eb) => ({
          netmap_epoch: eb('netmap_epoch', '+', 1),
          presence_epoch: eb('presence_epoch', '+', 1),
          next_addr_index: eb('next_addr_index', '+', 1),
        }))
        .where('id', '=', 'net_b')
        .execute();
      expect((await stampOf('net_b')).seq).toBe(start);
      await db.updateTable('networks').set({ flow_logs: 1 }).where('id', '=', 'net_b').execute();
      expect((await stampOf('net_b')).seq).toBe(start + 1);
      // Each watched table, written by anyone: its insert, its change, its delete.
      await db
        .insertInto('policies')
        .values({
          id: 'pol_b',
          network_id: 'net_b',
          version: 1,
          text: '{}',
          etag: 'e',
          created_at: 1,
          created_by: null,
        })
        .execute();
      expect((await stampOf('net_b')).seq).toBe(start + 2);
      await db.deleteFrom('policies').where('id', '=', 'pol_b').execute();
      expect((await stampOf('net_b')).seq).toBe(start + 3);
      // Nor does a write of another network move this one's stamp.
      await db.updateTable('networks').set({ flow_logs: 1 }).where('id', '=', 'net_a').execute();
      expect((await stampOf('net_b')).seq).toBe(start + 3);
    });
  });

  describe.runIf(backend === 'postgres')('identical reads in flight share the next statement (PostgreSQL)', () => {
    /** The network's plan, read slowly: a statement stays in flight long enough for calls to pile up. */
    const slowPlan = compiledQuery(
      (db, p: { id: string; at: number }) =>
        db
          .selectFrom('networks')
          .select(['plan', sql<string>`${p.at}::bigint::text`.as('at')])
          .where('id', '=', p.id)
          .where(sql<boolean>`(select true from pg_sleep(0.15))`),
      { name: 'slow plan', clock: 'at' },
    );
    const statements = () => {
      const sent: string[] = [];
      const listener = (message: unknown) => {
        if ((message as { query: string }).query === 'slow plan') sent.push('slow plan');
      };
      subscribe('warren:compiled-query:read', listener);
      return { sent, stop: () => unsubscribe('warren:compiled-query:read', listener) };
    };
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    it('answers the calls that asked while a statement was in flight with one more, at the latest clock value', async () => {
      const { db } = database.storage;
      const counted = statements();
      try {
        const first = slowPlan(db, { id: 'net_a', at: 100 });
        await sleep(30);
        const later = [1, 2, 3, 4, 5].map((i) => slowPlan(db, { id: 'net_a', at: 100 + i }));
        const other = slowPlan(db, { id: 'net_b', at: 100 });
        const answers = await Promise.all([first, ...later, other]);
        // The first, one for the five that waited for it, and the other network's.
        expect(counted.sent).toHaveLength(3);
        expect(answers[0]).toEqual([{ plan: 'free', at: '100' }]);
        for (const answer of answers.slice(1, 6)) {
          expect(answer).toBe(answers[1]);
          expect(answer).toEqual([{ plan: 'free', at: '105' }]);
        }
        expect(answers[6]).toEqual([{ plan: 'premium', at: '100' }]);
        // Shared, so frozen, as kept answers are.
        expect(Object.isFrozen(answers[1]) && Object.isFrozen(answers[1]![0])).toBe(true);
      } finally {
        counted.stop();
      }
    });

    it('never answers a call with a statement sent before it asked', async () => {
      const { db } = database.storage;
      // Sent, and its snapshot taken, before the change below commits.
      const before = slowPlan(db, { id: 'net_a', at: 1 });
      await sleep(50);
      await db.updateTable('networks').set({ plan: 'premium' }).where('id', '=', 'net_a').execute();
      try {
        // Asked after the commit, while the first statement is still in flight: it must see it.
        const after = slowPlan(db, { id: 'net_a', at: 1 });
        expect((await before)[0]!.plan).toBe('free');
        expect((await after)[0]!.plan).toBe('premium');
      } finally {
        await db.updateTable('networks').set({ plan: 'free' }).where('id', '=', 'net_a').execute();
      }
    });

    it('runs each call alone inside a transaction', async () => {
      await database.storage.db.transaction().execute(async (trx) => {
        await trx.updateTable('networks').set({ plan: 'premium' }).where('id', '=', 'net_a').execute();
        const [own] = await Promise.all([
          slowPlan(trx, { id: 'net_a', at: 1 }),
          slowPlan(database.storage.db, { id: 'net_a', at: 1 }),
        ]);
        expect(own).toEqual([{ plan: 'premium', at: '1' }]);
        await trx.updateTable('networks').set({ plan: 'free' }).where('id', '=', 'net_a').execute();
      });
    });
  });
});

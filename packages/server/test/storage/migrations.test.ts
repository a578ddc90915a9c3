import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { bootstrapIfEmpty } from '../../src/modules/tenants/tenants.service.js';
import { openStorage } from '../../src/storage/database.js';
import { createAuthKey, enroll } from '../devices/helpers.js';
import { backend, freshDatabase, startServer } from '../harness.js';

async function twoAtOnce() {
  if (backend === 'postgres') {
    const url = process.env.WARREN_TEST_POSTGRES_URL as string;
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const storages = await Promise.all([
      openStorage(url, { schema, poolSize: 2 }),
      openStorage(url, { schema, poolSize: 2 }),
    ]);
    return {
      storages,
      cleanup: async () => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
        await client.end();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'warren-mig-'));
  const url = `sqlite:${join(dir, 'w.db')}`;
  const storages = await Promise.all([openStorage(url), openStorage(url)]);
  return { storages, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

describe('migrations and first start', () => {
  it('survive two instances starting at once and create exactly one default network', async () => {
    const { storages, cleanup } = await twoAtOnce();
    try {
      const now = Date.now();
      // PostgreSQL instances race for real; a SQLite file is served by one process, so its
      // two connections here take turns (migrations above still ran at the same time).
      const created =
        backend === 'postgres'
          ? await Promise.all(storages.map((s) => bootstrapIfEmpty(s.db, now)))
          : [await bootstrapIfEmpty(storages[0]!.db, now), await bootstrapIfEmpty(storages[1]!.db, now)];
      expect(created.filter(Boolean)).toHaveLength(1);
      const networks = await storages[0]!.db.selectFrom('networks').selectAll().execute();
      expect(networks.map((n) => n.name)).toEqual(['default']);
      const applied = (await storages[1]!.db
        .selectFrom('kysely_migration' as never)
        .select('name' as never)
        .execute()) as { name: string }[];
      expect(new Set(applied.map((m) => m.name)).size).toBe(applied.length);
    } finally {
      await Promise.all(storages.map((s) => s.close()));
      await cleanup();
    }
  });

  it.runIf(backend === 'postgres')(
    'start while other sessions create and drop schemas of their own in the same database',
    async () => {
      // Another test run, or another tenant's tooling, dropping its schemas at that moment:
      // Kysely's listing of every schema's tables trips over each one that vanishes under it.
      const url = process.env.WARREN_TEST_POSTGRES_URL as string;
      const churners = await Promise.all(
        [1, 2].map(async () => {
          const client = new pg.Client({ connectionString: url });
          await client.connect();
          return client;
        }),
      );
      let churning = true;
      const churned = churners.map(async (churn) => {
        while (churning) {
          const other = `t_${randomBytes(6).toString('hex')}`;
          // Many serial tables: the listing asks for each one's sequence by name.
          const tables = Array.from({ length: 10 }, (_, i) => `create table ${other}.t${i} (id serial primary key)`);
          await churn.query(`create schema ${other}; ${tables.join('; ')}`);
          await churn.query(`drop schema ${other} cascade`);
        }
      });
      try {
        for (let i = 0; i < 4; i++) {
          const database = await freshDatabase();
          await database.drop();
        }
      } finally {
        churning = false;
        await Promise.all(churned);
        await Promise.all(churners.map((churn) => churn.end()));
      }
    },
    // Each start migrates a whole schema beside the churn: slow on a loaded machine.
    120_000,
  );

  it.runIf(backend === 'postgres')(
    'keep the rate-limit counters out of the write-ahead log, and only them',
    async () => {
      const database = await freshDatabase();
      try {
        const { rows } = await sql<{ relname: string }>`
        select relname from pg_class
        where relnamespace = current_schema()::regnamespace and relkind = 'r' and relpersistence = 'u'
        order by relname`.execute(database.storage.db);
        expect(rows.map((r) => r.relname)).toEqual(['rate_limit_buckets', 'rate_limit_slots']);
      } finally {
        await database.drop();
      }
    },
  );

  it.runIf(backend === 'postgres')('let a heartbeat update its device row in place, touching no index', async () => {
    const server = await startServer();
    try {
      const { device } = await enroll(server, (await createAuthKey(server)).key);
      const db = server.database.storage.db;
      // Counted for this transaction alone (pg_stat_xact_*), which then rolls back.
      let counts: unknown;
      const rollback = new Error('rollback');
      const done = db.transaction().execute(async (trx) => {
        for (let i = 1; i <= 3; i++) {
          await trx
            .updateTable('devices')
            .set({ last_seen_at: server.clock.now() + i, disconnected: 0 })
            .where('id', '=', device.id)
            .execute();
        }
        const { rows } = await sql<{ n_tup_upd: number; n_tup_hot_upd: number }>`
          select n_tup_upd, n_tup_hot_upd from pg_stat_xact_user_tables
          where relname = 'devices' and schemaname = current_schema()`.execute(trx);
        counts = rows[0];
        throw rollback;
      });
      await expect(done).rejects.toBe(rollback);
      expect(counts).toEqual({ n_tup_upd: 3, n_tup_hot_upd: 3 });
    } finally {
      await server.close();
    }
  });
});

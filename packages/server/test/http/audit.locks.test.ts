/**
 * On PostgreSQL a network's audit log appends are serialised by an advisory lock, which every
 * transaction takes last. This pins the interleaving that once deadlocked: a batched flush
 * waiting for that lock with a key's use counted, and a DELETE of the same key that has
 * already locked the key's row. Both must complete, and nothing may be lost.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLockName } from '../../src/core/audit-entries.js';
import { backend, json, secondInstance, startServer, type TestServer } from '../harness.js';

async function waitForLockWaiters(client: pg.Client, count: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await client.query<{ n: string }>(
      `select count(*) as n from pg_locks where locktype = 'advisory' and not granted`,
    );
    if (Number(rows[0]?.n) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`fewer than ${count} transactions ever waited for the audit lock`);
}

describe.runIf(backend === 'postgres')('audit lock order (PostgreSQL)', () => {
  let server: TestServer;
  let holder: pg.Client;
  let watcher: pg.Client;
  beforeAll(async () => {
    server = await startServer();
    holder = new pg.Client({ connectionString: server.database.url });
    watcher = new pg.Client({ connectionString: server.database.url });
    await holder.connect();
    await watcher.connect();
  });
  afterAll(async () => {
    await holder.end();
    await watcher.end();
    await server.close();
  });

  it('a flush of key uses and a DELETE of that key both complete while they wait on each other', async () => {
    const errors: unknown[] = [];
    server.app.ctx.audit.onError = (error) => errors.push(error);
    const key = await json(
      await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'rotating', scopes: ['read'] } }),
    );
    await server.app.ctx.audit.flush();

    // Hold the network's audit lock, so that what follows queues up behind it.
    await holder.query('begin');
    await holder.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [auditLockName(server.networkId)]);
    expect(
      (await server.call('GET', '/v1/network', { key: key.key, headers: { 'x-request-id': 'req-used' } })).status,
    ).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 20)); // the entry is queued after the response
    const flushed = server.app.ctx.audit.flush();
    await waitForLockWaiters(watcher, 1);
    // From another instance: this one's changes wait for its own batch in flight when it holds
    // entries of their network (AuditLog.recordNetwork), so the two would never meet here.
    const other = await secondInstance(server);
    const deleted = fetch(`${other.url}/v1/keys/${key.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    await waitForLockWaiters(watcher, 2);
    await holder.query('commit');

    expect((await deleted).status).toBe(204);
    await flushed;
    await other.settled();
    await other.close();
    expect(errors).toEqual([]);
    expect((await server.call('GET', '/v1/network', { key: key.key })).status).toBe(401);
    const detail = await json(await server.call('GET', `/v1/keys/${key.id}`));
    expect(detail).toMatchObject({ state: 'revoked', uses: 1 });
    const entries = (await json(await server.call('GET', '/v1/logs/audit?limit=1000'))).entries;
    expect(entries.some((e: { requestId: string }) => e.requestId === 'req-used')).toBe(true);
    expect(
      entries.some((e: { action: string; target: string }) => e.action === 'key.delete' && e.target === key.id),
    ).toBe(true);
  });

  it("one network's audit writes never wait for another's", async () => {
    const other = await server.addNetwork();
    await holder.query('begin');
    await holder.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [auditLockName(server.networkId)]);
    try {
      const created = server.call('POST', '/v1/keys', { key: other.apiKey, body: { description: 'elsewhere' } });
      const outcome = await Promise.race([
        created.then((res) => res.status),
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5_000)),
      ]);
      expect(outcome).toBe(201);
    } finally {
      await holder.query('commit');
    }
  });
});

/**
 * The headline rule of core/: a change, its audit entry and its events commit together. If
 * the audit entry cannot be written, the change is rolled back and the call fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';
import { refuseInserts } from './refuse-inserts.js';

describe('unit of work', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  const db = () => server.database.storage.db;
  const userCount = async () =>
    (await db().selectFrom('users').select('id').where('network_id', '=', server.networkId).execute()).length;

  it('rolls a user back when its audit entry cannot be written', async () => {
    const before = await userCount();
    const allow = await refuseInserts(db(), 'audit_log', "new.action = 'user.create'");
    try {
      const response = await server.call('POST', '/v1/users', { body: { loginName: 'lost@example.com' } });
      expect(response.status).toBe(500);
      expect((await json(response)).code).toBe('internal');
    } finally {
      await allow();
    }
    expect(await userCount()).toBe(before);
    const created = await server.call('POST', '/v1/users', { body: { loginName: 'lost@example.com' } });
    expect(created.status).toBe(201);
  });

  it('keeps a user change out when its audit entry cannot be written', async () => {
    const owner = await db()
      .selectFrom('users')
      .select('id')
      .where('network_id', '=', server.networkId)
      .where('role', '=', 'owner')
      .executeTakeFirstOrThrow();
    const allow = await refuseInserts(db(), 'audit_log', "new.action = 'user.update'");
    try {
      const response = await server.call('PATCH', `/v1/users/${owner.id}`, { body: { displayName: 'changed' } });
      expect(response.status).toBe(500);
    } finally {
      await allow();
    }
    const after = await db()
      .selectFrom('users')
      .select('display_name')
      .where('id', '=', owner.id)
      .executeTakeFirstOrThrow();
    expect(after.display_name).not.toBe('changed');
  });
});

describe('unit of work and its events', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('rolls a change back when its event cannot be written, and writes no audit entry for it', async () => {
    const db = server.database.storage.db;
    const allow = await refuseInserts(db, 'events', "new.type = 'user.created'");
    try {
      const response = await server.call('POST', '/v1/users', { body: { loginName: 'gone@example.com' } });
      expect(response.status).toBe(500);
    } finally {
      await allow();
    }
    const users = await db.selectFrom('users').select('id').where('login_name', '=', 'gone@example.com').execute();
    expect(users).toEqual([]);
    const changes = await db.selectFrom('audit_log').select('seq').where('action', '=', 'user.create').execute();
    expect(changes).toEqual([]);
  });
});

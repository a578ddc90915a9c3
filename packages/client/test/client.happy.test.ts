import { defineTags, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DnsRecordBody, Warren } from '../src/index.js';
import { startWithClient } from './fixture.js';

describe('Warren client: typed calls against a real server', () => {
  let server: TestServer;
  let warren: Warren;
  beforeAll(async () => {
    ({ server, warren } = await startWithClient());
    // Tags must be defined in the policy's tagOwners before keys or devices carry them.
    await defineTags(server, ['tag:ci']);
  });
  afterAll(() => server.close());

  it('reads the network', async () => {
    const network = await warren.network.get();
    expect(network).toMatchObject({ id: server.networkId, plan: 'premium', usage: { users: 1 } });
    expect(network.limits.users).toBeNull();
  });

  it('sets split DNS and extra records, typed as the API takes and shows them', async () => {
    const extraRecords: DnsRecordBody[] = [{ name: 'grafana.corp.example', type: 'A', value: '100.64.0.10' }];
    const splitDns = { 'lab.example': ['10.0.0.53'], 'local.example': [] };
    const updated = await warren.network.update({ dns: { splitDns, extraRecords } });
    expect(updated.dns).toMatchObject({ splitDns, extraRecords });
    expect((await warren.network.get()).dns.splitDns['lab.example']).toEqual(['10.0.0.53']);
    const refused = await warren.network
      .update({ dns: { extraRecords: [{ ...extraRecords[0]!, type: 'AAAA' }] } })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, code: 'invalid_request' });
    await warren.network.update({ dns: { splitDns: {}, extraRecords: [] } });
  });

  it('creates, lists, updates and deletes users', async () => {
    const ana = await warren.users.create({ loginName: 'ana@example.com', displayName: 'Ana', role: 'admin' });
    expect(ana).toMatchObject({ loginName: 'ana@example.com', displayName: 'Ana', role: 'admin', deviceCount: 0 });
    expect(ana.id).toMatch(/^usr_/);

    const admins = await warren.users.list({ role: 'admin' });
    expect(admins.map((u) => u.loginName)).toEqual(['ana@example.com']);
    expect((await warren.users.list()).length).toBe(2);

    const member = await warren.users.update(ana.id, { role: 'member' });
    expect(member.role).toBe('member');

    await warren.users.delete(ana.id);
    expect((await warren.users.list()).map((u) => u.loginName)).toEqual(['owner@example.com']);
  });

  it('creates an auth key whose secret is shown once, then gets, lists and revokes it', async () => {
    const created = await warren.keys.create({
      reusable: true,
      ephemeral: true,
      tags: ['tag:ci'],
      expiresIn: '24h',
      description: 'ci runners',
    });
    expect(created.key).toMatch(/^wrn_auth_/);
    expect(created).toMatchObject({ type: 'auth', reusable: true, ephemeral: true, tags: ['tag:ci'], state: 'valid' });
    const hours = (Date.parse(created.expires) - Date.parse(created.created)) / 3_600_000;
    expect(hours).toBeCloseTo(24, 1);

    const fetched = await warren.keys.get(created.id);
    expect(fetched.id).toBe(created.id);
    expect(fetched).not.toHaveProperty('key');

    const auth = await warren.keys.list({ type: 'auth' });
    expect(auth.map((k) => k.id)).toContain(created.id);
    const api = await warren.keys.list({ type: 'api' });
    expect(api.length).toBeGreaterThan(0);
    expect(api.every((k) => k.type === 'api')).toBe(true);
    expect(api.map((k) => k.id)).not.toContain(created.id);

    await warren.keys.delete(created.id);
    expect((await warren.keys.get(created.id)).state).toBe('revoked');
    expect((await warren.keys.list({ state: 'revoked' })).map((k) => k.id)).toEqual([created.id]);
  });

  it('creates a scoped API key that works at once', async () => {
    const created = await warren.keys.create({ type: 'api', name: 'reader', scopes: ['read'], expiresIn: '1d' });
    expect(created.key).toMatch(/^wrn_api_/);
    expect(created).toMatchObject({ type: 'api', name: 'reader', scopes: ['read'] });
    const reader = new Warren({ url: server.url, apiKey: created.key });
    expect((await reader.network.get()).id).toBe(server.networkId);
  });

  it('pages through the audit log and walks every page', async () => {
    for (let i = 0; i < 5; i++) await warren.network.get();
    const first = await warren.logs.audit({ since: '1h', limit: 2 });
    expect(first.entries).toHaveLength(2);
    expect(first.hasMore).toBe(true);
    expect(typeof first.nextCursor).toBe('string');

    const all = [];
    for await (const entry of warren.logs.auditAll({ since: '1h', limit: 2 })) all.push(entry);
    expect(all.length).toBeGreaterThanOrEqual(10);
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    expect(all.filter((e) => e.path === '/v1/network').length).toBeGreaterThanOrEqual(6);

    // Tailing: the last cursor returns only what arrived since.
    const end = await warren.logs.audit({ since: '1h', limit: 1000 });
    await warren.users.list();
    const next = await warren.logs.audit({ cursor: end.nextCursor });
    expect(next.entries.map((e) => e.path)).toContain('/v1/users');
    expect(next.entries.map((e) => e.path)).not.toContain('/v1/network');
  });
});

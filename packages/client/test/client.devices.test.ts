import { defineTags, type Enrolled, enroll, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Warren, WarrenError } from '../src/index.js';
import { startWithClient } from './fixture.js';

describe('Warren client: devices and routes', () => {
  let server: TestServer;
  let warren: Warren;
  let web: Enrolled[];
  let gw: Enrolled;
  beforeAll(async () => {
    ({ server, warren } = await startWithClient());
    // Tags must be defined in the policy's tagOwners before keys or devices carry them.
    await defineTags(server, ['tag:server', 'tag:web']);
    web = await enroll(server, ['web-1', 'web-2'], { tags: ['tag:server', 'tag:web'] });
    [gw] = (await enroll(server, ['gw-1'], { offline: true, advertiseRoutes: ['10.0.0.0/24'] })) as [Enrolled];
  });
  afterAll(() => server.close());

  it('lists with filters that combine with AND; several tags must all match', async () => {
    const all = await warren.devices.list();
    expect(all.map((d) => d.name).sort()).toEqual(['gw-1', 'web-1', 'web-2']);
    expect(all[0]).not.toHaveProperty('addresses');

    expect((await warren.devices.list({ tag: 'tag:web' })).length).toBe(2);
    expect((await warren.devices.list({ tag: ['tag:web', 'tag:server'] })).length).toBe(2);
    expect((await warren.devices.list({ tag: ['tag:web', 'tag:other'] })).length).toBe(0);
    expect((await warren.devices.list({ online: false })).map((d) => d.name)).toEqual(['gw-1']);
    expect((await warren.devices.list({ online: true, tag: 'tag:web' })).length).toBe(2);
    expect((await warren.devices.list({ user: 'owner@example.com' })).map((d) => d.name)).toContain('gw-1');

    const detailed = await warren.devices.list({ fields: 'all', online: false });
    expect(detailed[0]!.addresses).toHaveLength(2);
    expect(detailed[0]!.routes).toEqual([expect.objectContaining({ prefix: '10.0.0.0/24', state: 'pending' })]);
  });

  it('pages and searches the list in name order', async () => {
    const first = await warren.devices.page({ limit: 2 });
    expect(first.devices.map((d) => d.name)).toEqual(['gw-1', 'web-1']);
    expect(first).toMatchObject({ hasMore: true, total: 3 });
    const second = await warren.devices.page({ limit: 2, cursor: first.nextCursor! });
    expect(second).toMatchObject({ hasMore: false, nextCursor: null, total: 3 });
    expect(second.devices.map((d) => d.name)).toEqual(['web-2']);
    const found = await warren.devices.page({ q: 'web', tag: 'tag:web', fields: 'all' });
    expect(found.devices.map((d) => d.name)).toEqual(['web-1', 'web-2']);
    expect(found.devices[0]!.addresses).toHaveLength(2);
  });

  it('gets the detail record', async () => {
    const device = await warren.devices.get(web[0]!.id);
    expect(device).toMatchObject({ id: web[0]!.id, name: 'web-1', online: true, tags: ['tag:server', 'tag:web'] });
    expect(device.addresses?.[0]).toMatch(/^100\./);
    expect(device.clientVersion).toBe('1.2.3');
  });

  it('replaces and clears tags; unknown or malformed tags are refused', async () => {
    const cleared = await warren.devices.setTags(web[1]!.id, []);
    expect(cleared.tags).toEqual([]);
    const error = await warren.devices.setTags(web[1]!.id, ['server']).catch((e) => e);
    expect(error).toBeInstanceOf(WarrenError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_tag' });
  });

  it('approves and disables routes; a transition that does not hold is 409 invalid_state', async () => {
    const [route] = await warren.routes.list({ state: 'pending' });
    expect(route).toMatchObject({ prefix: '10.0.0.0/24', deviceId: gw.id, deviceName: 'gw-1', state: 'pending' });
    expect(await warren.routes.list({ device: web[0]!.id })).toEqual([]);

    expect((await warren.routes.approve(route!.id)).state).toBe('approved');
    expect((await warren.routes.list({ state: 'approved', device: gw.id })).map((r) => r.id)).toEqual([route!.id]);
    expect((await warren.routes.disable(route!.id)).state).toBe('disabled');
    const error = await warren.routes.disable(route!.id).catch((e) => e);
    expect(error).toMatchObject({ status: 409, code: 'invalid_state' });
    expect((await warren.routes.approve(route!.id)).state).toBe('approved');
  });

  it('deletes a device: it is gone, and a second delete is 404', async () => {
    await warren.devices.delete(web[1]!.id);
    await expect(warren.devices.get(web[1]!.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(warren.devices.delete(web[1]!.id)).rejects.toMatchObject({ status: 404 });
  });
});

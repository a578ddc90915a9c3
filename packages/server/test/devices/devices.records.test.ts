/**
 * The device list reuses the records a server keeps (modules/devices/device-records.ts). These
 * tests list through a second instance on the same database, so every change below reaches it
 * only through the database: a list must never show a record older than the change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTags } from '../acl/helpers.js';
import { json, type SecondInstance, secondInstance } from '../harness.js';
import {
  type EnrolledDevice,
  enroll,
  heartbeat,
  listFields,
  newNodeKey,
  register,
  startWithAuthKey,
} from './helpers.js';

describe('device list records kept between calls', () => {
  let server: Awaited<ReturnType<typeof startWithAuthKey>>['server'];
  let authKey: string;
  let second: SecondInstance;
  const devices: EnrolledDevice[] = [];

  beforeAll(async () => {
    ({ server, authKey } = await startWithAuthKey());
    await defineTags(server, ['tag:web', 'tag:db']);
    second = await secondInstance(server);
    for (let i = 0; i < 3; i++) devices.push(await enroll(server, authKey, { hostname: `host${i}` }));
  });
  afterAll(async () => {
    await second.close();
    await server.close();
  });

  /** The list as the second instance serves it, and its detail records from the first. */
  async function listBoth(query = '') {
    const res = await second.get(`/v1/devices${query}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const listed = (await json(res)).devices;
    const details = (await json(await server.call('GET', `/v1/devices?fields=all${query ? `&${query.slice(1)}` : ''}`)))
      .devices;
    return { listed, expected: details.map(listFields) };
  }

  it('serves the same records as the detail list, in the same order', async () => {
    const { listed, expected } = await listBoth();
    expect(listed).toHaveLength(3);
    expect(listed).toEqual(expected);
  });

  it('shows a re-tag made on the other instance at once', async () => {
    await listBoth();
    const id = devices[1]!.device.id;
    const res = await server.call('POST', `/v1/devices/${id}/tags`, { body: { tags: ['tag:db'] } });
    expect(res.status).toBe(200);
    const { listed, expected } = await listBoth();
    expect(listed.find((d: any) => d.id === id).tags).toEqual(['tag:db']);
    expect(listed).toEqual(expected);
    const filtered = await listBoth('?tag=tag:db');
    expect(filtered.listed.map((d: any) => d.id)).toEqual([id]);
  });

  it('shows presence moving, by a heartbeat and by time passing', async () => {
    const device = devices[0]!;
    await listBoth();
    await heartbeat(server, device.nodeToken);
    let { listed, expected } = await listBoth();
    expect(listed.find((d: any) => d.id === device.device.id).online).toBe(true);
    expect(listed).toEqual(expected);
    server.clock.advance(61_000);
    ({ listed, expected } = await listBoth());
    expect(listed.find((d: any) => d.id === device.device.id).online).toBe(false);
    expect(listed).toEqual(expected);
    expect((await listBoth('?online=true')).listed).toEqual([]);
  });

  it('shows a new hostname from a re-enrollment, and a renamed owner', async () => {
    const nodeKey = newNodeKey();
    const first = await json(await register(server, authKey, { hostname: 'laptop', nodeKey }));
    await listBoth();
    const again = await register(server, authKey, { hostname: 'workstation', nodeKey });
    expect(again.status).toBe(201);
    let { listed, expected } = await listBoth();
    expect(listed.find((d: any) => d.id === first.device.id).hostname).toBe('workstation');
    expect(listed).toEqual(expected);

    // No API call renames a login; an operator's direct fix in the database must still show.
    const owner = listed.find((d: any) => d.user)?.user;
    expect(owner).toBeDefined();
    await server.database.storage.db
      .updateTable('users')
      .set({ login_name: 'renamed@example.com' })
      .where('id', '=', owner.id)
      .execute();
    ({ listed, expected } = await listBoth());
    expect(listed.find((d: any) => d.user?.id === owner.id).user.loginName).toBe('renamed@example.com');
    expect(listed).toEqual(expected);
  });

  it('leaves out a deleted device', async () => {
    await listBoth();
    const id = devices[2]!.device.id;
    expect((await server.call('DELETE', `/v1/devices/${id}`)).status).toBe(204);
    const { listed, expected } = await listBoth();
    expect(listed.map((d: any) => d.id)).not.toContain(id);
    expect(listed).toEqual(expected);
  });
});

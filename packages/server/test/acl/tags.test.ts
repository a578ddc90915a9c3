import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthKey, enroll, expectProblem, getDevice } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { applyPolicy, policyDefining } from './helpers.js';

describe('tag ownership', () => {
  let server: TestServer;
  let device: any;
  const keyCount = async () => (await json(await server.call('GET', '/v1/keys?type=auth'))).keys.length;
  beforeAll(async () => {
    server = await startServer();
    device = (await enroll(server, (await createAuthKey(server)).key, { hostname: 'box' })).device;
  });
  afterAll(() => server.close());

  it('refuses every tag while the default policy defines none', async () => {
    const body = await expectProblem(
      await server.call('POST', `/v1/devices/${device.id}/tags`, { body: { tags: ['tag:web'] } }),
      400,
      'invalid_tag',
    );
    expect(body.detail).toBe(`"tag:web" is not in the policy's tagOwners; define it there (PUT /v1/acl) first`);
    const before = await keyCount();
    await expectProblem(await server.call('POST', '/v1/keys', { body: { tags: ['tag:web'] } }), 400, 'invalid_tag');
    expect(await keyCount()).toBe(before);
    // Clearing tags needs no policy.
    expect((await server.call('POST', `/v1/devices/${device.id}/tags`, { body: { tags: [] } })).status).toBe(200);
  });

  it('lets an API key apply any tag defined in tagOwners, whoever owns it, and names the undefined ones', async () => {
    await applyPolicy(
      server,
      `{
        "groups": { "group:ops": ["someone@example.com"] },
        "tagOwners": { "tag:web": ["group:ops"], "tag:db": ["someone@example.com"], "tag:ci": ["tag:web"] },
        "acls": [],
      }`,
    );
    const res = await server.call('POST', `/v1/devices/${device.id}/tags`, { body: { tags: ['tag:web', 'tag:db'] } });
    expect(res.status).toBe(200);
    expect((await json(res)).tags).toEqual(['tag:db', 'tag:web']);

    const body = await expectProblem(
      await server.call('POST', `/v1/devices/${device.id}/tags`, {
        body: { tags: ['tag:web', 'tag:nope', 'tag:other'] },
      }),
      400,
      'invalid_tag',
    );
    expect(body.detail).toMatch(/^"tag:nope", "tag:other" are not in the policy's tagOwners/);
    expect((await getDevice(server, device.id)).body.tags).toEqual(['tag:db', 'tag:web']);

    const key = await server.call('POST', '/v1/keys', { body: { tags: ['tag:ci', 'tag:db'] } });
    expect(key.status).toBe(201);
    expect((await json(key)).tags).toEqual(['tag:ci', 'tag:db']);
    const refused = await expectProblem(
      await server.call('POST', '/v1/keys', { body: { tags: ['tag:ci', 'tag:gone'] } }),
      400,
      'invalid_tag',
    );
    expect(refused.detail).toContain('"tag:gone"');
  });

  it('checks syntax before ownership', async () => {
    await expectProblem(
      await server.call('POST', `/v1/devices/${device.id}/tags`, { body: { tags: ['Bad Tag'] } }),
      400,
      'invalid_tag',
    );
  });

  it('keeps tags on devices and keys when a new policy drops them from tagOwners', async () => {
    await applyPolicy(server, policyDefining(['tag:keep', 'tag:drop']));
    const key = await createAuthKey(server, { reusable: true, tags: ['tag:drop'] });
    const tagged = await enroll(server, key.key, { hostname: 'tagged' });
    expect(tagged.device.tags).toEqual(['tag:drop']);

    await applyPolicy(server, policyDefining(['tag:keep']));
    expect((await getDevice(server, tagged.device.id)).body.tags).toEqual(['tag:drop']);
    // The key still enrolls with the tags it was made with…
    expect((await enroll(server, key.key, { hostname: 'later' })).device.tags).toEqual(['tag:drop']);
    // …but nobody can apply the dropped tag anew.
    await expectProblem(
      await server.call('POST', `/v1/devices/${device.id}/tags`, { body: { tags: ['tag:drop'] } }),
      400,
      'invalid_tag',
    );
    await expectProblem(await server.call('POST', '/v1/keys', { body: { tags: ['tag:drop'] } }), 400, 'invalid_tag');
  });
});

/** /v1/webhooks refusals: targets, filters, the plan's limit, scopes; and the address guard. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isForbiddenAddress } from '../../src/modules/webhooks/forbidden-addresses.js';
import { json, startServer, type TestServer } from '../harness.js';

describe('webhook endpoints', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ plan: 'free' });
  });
  afterAll(() => server.close());

  const create = (body: unknown, key?: string) => server.call('POST', '/v1/webhooks', { body, key });

  it.each([
    [{ url: 'http://hooks.example.com/x', events: ['*'] }, 'invalid_request'],
    [{ url: 'https://127.0.0.1/x', events: ['*'] }, 'invalid_request'],
    [{ url: 'https://[::1]/x', events: ['*'] }, 'invalid_request'],
    [{ url: 'https://169.254.169.254/latest', events: ['*'] }, 'invalid_request'],
    [{ url: 'https://localhost/x', events: ['*'] }, 'invalid_request'],
    [{ url: 'not a url', events: ['*'] }, 'invalid_request'],
    [{ url: 'https://hooks.example.com/x', events: ['device.exploded'] }, 'invalid_request'],
    [{ url: 'https://hooks.example.com/x', events: ['nothing.*'] }, 'invalid_request'],
    [{ url: 'https://hooks.example.com/x', events: [] }, 'invalid_request'],
    [{ url: 'https://hooks.example.com/x', events: ['*'], secret: 'mine' }, 'unknown_field'],
  ])('refuses %j with %s and creates nothing', async (body, code) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect((await json(res)).code).toBe(code);
    expect((await json(await server.call('GET', '/v1/webhooks'))).webhooks).toEqual([]);
  });

  it('keeps to the free plan’s one webhook, and says so in GET /v1/network', async () => {
    const network = await json(await server.call('GET', '/v1/network'));
    expect(network.limits.webhooks).toBe(1);
    const first = await create({ url: 'https://hooks.example.com/a', events: ['device.*'], description: 'ops' });
    expect(first.status).toBe(201);
    const second = await create({ url: 'https://hooks.example.com/b', events: ['*'] });
    expect(second.status).toBe(403);
    expect((await json(second)).code).toBe('plan_limit');
    const hook = await json(first);
    expect(first.headers.get('location')).toBe(`/v1/webhooks/${hook.id}`);
    const patched = await server.call('PATCH', `/v1/webhooks/${hook.id}`, {
      body: { enabled: false, events: ['user.deleted'] },
    });
    expect(await json(patched)).toMatchObject({
      enabled: false,
      disabledReason: 'disabled by request',
      events: ['user.deleted'],
    });
    // A test event to a disabled endpoint would wait, unseen, until it is enabled: refused instead.
    const test = await server.call('POST', `/v1/webhooks/${hook.id}/test`);
    expect(test.status).toBe(409);
    expect((await json(test)).code).toBe('invalid_state');
    const queued = await server.database.storage.db
      .selectFrom('events')
      .select('id')
      .where('webhook_id', '=', hook.id)
      .execute();
    expect(queued).toEqual([]);
    const enabled = await json(await server.call('PATCH', `/v1/webhooks/${hook.id}`, { body: { enabled: true } }));
    expect(enabled).toMatchObject({ enabled: true, disabledReason: null, description: 'ops' });
    expect((await server.call('PATCH', `/v1/webhooks/${hook.id}`, { body: { url: 'http://10.0.0.1/' } })).status).toBe(
      400,
    );
    expect((await server.call('DELETE', `/v1/webhooks/${hook.id}`)).status).toBe(204);
    expect((await server.call('GET', `/v1/webhooks/${hook.id}`)).status).toBe(404);
  });

  it('needs the webhooks scope to change them; read may list them', async () => {
    const key = async (scopes: string[]) =>
      (
        await json(
          await server.call('POST', '/v1/keys', {
            body: { type: 'api', name: scopes.join('-'), scopes, expiresIn: '1h' },
          }),
        )
      ).key;
    const reader = await key(['read']);
    const writer = await key(['webhooks']);
    expect((await server.call('GET', '/v1/webhooks', { key: reader })).status).toBe(200);
    const refused = await create({ url: 'https://hooks.example.com/a', events: ['*'] }, reader);
    expect(refused.status).toBe(403);
    expect((await json(refused)).scope).toBe('webhooks');
    const made = await create({ url: 'https://hooks.example.com/a', events: ['*'] }, writer);
    expect(made.status).toBe(201);
    const other = await server.addNetwork();
    expect((await server.call('GET', `/v1/webhooks/${(await json(made)).id}`, { key: other.apiKey })).status).toBe(404);
  });

  it('guards every private, loopback, link-local, CGNAT and metadata address, also IPv4-mapped', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.7',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd7a:115c:a1e0::7',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '::',
    ]) {
      expect(isForbiddenAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(isForbiddenAddress(address), address).toBe(false);
    }
  });
});

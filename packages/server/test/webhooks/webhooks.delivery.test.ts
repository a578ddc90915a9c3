/**
 * Deliveries to a real receiver on loopback, checked the way receivers check them: with the
 * Standard Webhooks reference library.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthKey, enroll } from '../devices/helpers.js';
import { eventPage } from '../events/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { type Received, Receiver, waitFor } from './receiver.js';

const verify = (secret: string, r: Received) =>
  new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string; data: { id: string } };

describe('webhook delivery', () => {
  let server: TestServer;
  const receiver = new Receiver();
  beforeAll(async () => {
    await receiver.start();
    server = await startServer({
      settings: {
        webhooksAllowPrivate: true,
        webhookRetryScheduleMs: [100, 100, 100],
        eventDetectorIntervalMs: 3_600_000,
      },
    });
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  async function subscribe(path: string, events: string[] = ['*']) {
    const res = await server.call('POST', '/v1/webhooks', { body: { url: `${receiver.url}${path}`, events } });
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    return body as { id: string; secret: string };
  }

  it('delivers each change signed, once per event, in commit order, and nothing of a refused request', async () => {
    const hook = await subscribe('/all');
    const start = (await eventPage(server)).nextCursor;
    const authKey = await createAuthKey(server, { reusable: true });
    const device = await enroll(server, authKey.key, { hostname: 'gw-1', advertiseRoutes: ['10.7.0.0/24'] });
    await server.call('POST', `/v1/routes/${device.device.routes[0].id}/approve`);
    const policy = await server.call('GET', '/v1/acl', { headers: { accept: 'application/hujson' } });
    await server.call('PUT', '/v1/acl', {
      // A new text: the one stored already would be no change, and no event.
      raw: `${await policy.text()}// reviewed\n`,
      headers: { 'content-type': 'application/hujson' },
    });
    const refused = await server.call('PUT', '/v1/acl', {
      raw: '{"acls": [{"action": "drop"}]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(refused.status).toBe(400);
    await server.call('DELETE', `/v1/keys/${authKey.id}`);
    const committed = (await eventPage(server, `?cursor=${start}`)).entries.map((e) => e.id);
    expect(committed).toHaveLength(6);
    await waitFor(() => receiver.at('/all').length >= committed.length);
    // Long enough for a second delivery of any of them, had there been one.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.at('/all')).toHaveLength(committed.length);
    const got = receiver.at('/all').map((r) => ({ id: r.headers['webhook-id'], body: verify(hook.secret, r) }));
    expect(got.map((g) => g.id)).toEqual(committed);
    expect(got.map((g) => g.body.type)).toEqual([
      'key.created',
      'device.created',
      'route.advertised',
      'route.approved',
      'policy.updated',
      'key.deleted',
    ]);
    expect(got.every((g) => g.body.data.id === g.id)).toBe(true);
    expect(() => verify('whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', receiver.at('/all')[0]!)).toThrow();
    const deliveries = await json(await server.call('GET', `/v1/webhooks/${hook.id}/deliveries`));
    expect(deliveries.entries.map((d: { state: string }) => d.state)).toEqual(Array(6).fill('delivered'));
    const webhook = await json(await server.call('GET', `/v1/webhooks/${hook.id}`));
    expect(webhook.lastDelivery).not.toBeNull();
    expect(webhook.secret).toBeUndefined();
    await server.call('DELETE', `/v1/webhooks/${hook.id}`);
  });

  it('retries a failing endpoint with the same webhook-id until it answers 2xx', async () => {
    receiver.script('/flaky', [500, 503]);
    const hook = await subscribe('/flaky', ['user.*']);
    await server.call('POST', '/v1/users', { body: { loginName: 'flaky@example.com' } });
    await waitFor(() => receiver.at('/flaky').length >= 3);
    const attempts = receiver.at('/flaky');
    expect(attempts.map((a) => a.status)).toEqual([500, 503, 200]);
    expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1);
    for (const attempt of attempts) expect(verify(hook.secret, attempt).type).toBe('user.created');
    await waitFor(async () => {
      const page = await json(await server.call('GET', `/v1/webhooks/${hook.id}/deliveries`));
      return page.entries[0]?.state === 'delivered';
    });
    const page = await json(await server.call('GET', `/v1/webhooks/${hook.id}/deliveries`));
    expect(page.entries[0]).toMatchObject({ state: 'delivered', attempts: 3, lastStatus: 200, type: 'user.created' });
    await server.call('DELETE', `/v1/webhooks/${hook.id}`);
  });

  it('disables an endpoint that answers 410 Gone', async () => {
    receiver.script('/gone', [410]);
    const hook = await subscribe('/gone', ['user.created']);
    await server.call('POST', '/v1/users', { body: { loginName: 'gone@example.com' } });
    await waitFor(async () => !(await json(await server.call('GET', `/v1/webhooks/${hook.id}`))).enabled);
    const webhook = await json(await server.call('GET', `/v1/webhooks/${hook.id}`));
    expect(webhook.disabledReason).toMatch(/410/);
    await server.call('POST', '/v1/users', { body: { loginName: 'after@example.com' } });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(receiver.at('/gone')).toHaveLength(1);
    const retry = await server.call(
      'POST',
      `/v1/webhooks/${hook.id}/deliveries/${(await json(await server.call('GET', `/v1/webhooks/${hook.id}/deliveries`))).entries[0].id}/retry`,
    );
    expect(retry.status).toBe(409);
    await server.call('DELETE', `/v1/webhooks/${hook.id}`);
  });

  it('resumes an endpoint enabled again from then on, without the events of its pause', async () => {
    const hook = await subscribe('/paused', ['user.created']);
    const patch = (body: unknown) => server.call('PATCH', `/v1/webhooks/${hook.id}`, { body });
    expect((await json(await patch({ enabled: false }))).disabledReason).toBe('disabled by request');
    await server.call('POST', '/v1/users', { body: { loginName: 'while-paused@example.com' } });
    expect(await json(await patch({ enabled: true }))).toMatchObject({ enabled: true, disabledReason: null });
    await server.call('POST', '/v1/users', { body: { loginName: 'after-pause@example.com' } });
    await waitFor(() => receiver.at('/paused').length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const users = receiver.at('/paused').map((r) => (verify(hook.secret, r).data as any).data.user.loginName);
    expect(users).toEqual(['after-pause@example.com']);
    await server.call('DELETE', `/v1/webhooks/${hook.id}`);
  });

  it('keeps the reason a 410 gave when the endpoint is disabled again, and changes nothing', async () => {
    receiver.script('/gone-twice', [410]);
    const hook = await subscribe('/gone-twice', ['user.created']);
    await server.call('POST', '/v1/users', { body: { loginName: 'gone-twice@example.com' } });
    await waitFor(async () => !(await json(await server.call('GET', `/v1/webhooks/${hook.id}`))).enabled);
    const patched = await json(await server.call('PATCH', `/v1/webhooks/${hook.id}`, { body: { enabled: false } }));
    expect(patched.disabledReason).toMatch(/410 Gone/);
    await server.call('DELETE', `/v1/webhooks/${hook.id}`);
  });

  it('signs with both secrets during a rotation, and sends a test event to one endpoint only', async () => {
    const hook = await subscribe('/rotating', ['webhook.test']);
    const other = await subscribe('/other', ['*']);
    const rotated = await server.call('POST', `/v1/webhooks/${hook.id}/rotate`);
    expect(rotated.status).toBe(200);
    const { secret } = await json(rotated);
    expect(secret).not.toBe(hook.secret);
    expect((await server.call('POST', `/v1/webhooks/${hook.id}/test`)).status).toBe(202);
    await waitFor(() => receiver.at('/rotating').length >= 1);
    const delivered = receiver.at('/rotating')[0]!;
    expect(String(delivered.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(secret, delivered).type).toBe('webhook.test');
    expect(verify(hook.secret, delivered).type).toBe('webhook.test');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.at('/other')).toEqual([]);
    // Neither secret appears in any record the API returns after creation.
    const listed = await (await server.call('GET', '/v1/webhooks')).text();
    expect(listed).not.toContain(secret.slice(6));
    await server.call('DELETE', `/v1/webhooks/${hook.id}`);
    await server.call('DELETE', `/v1/webhooks/${other.id}`);
  });

  it('retries by hand a delivery that ran out of attempts', async () => {
    receiver.script('/down', [500, 500, 500, 500]);
    const hook = await subscribe('/down', ['user.created']);
    await server.call('POST', '/v1/users', { body: { loginName: 'down@example.com' } });
    const deliveries = `/v1/webhooks/${hook.id}/deliveries`;
    await waitFor(async () => (await json(await server.call('GET', deliveries))).entries[0]?.state === 'failed');
    const failed = (await json(await server.call('GET', deliveries))).entries[0];
    expect(failed).toMatchObject({ attempts: 4, lastStatus: 500, nextAttempt: null });
    // The state filter keeps the page to that state.
    expect((await json(await server.call('GET', `${deliveries}?state=failed`))).entries).toEqual([failed]);
    expect((await json(await server.call('GET', `${deliveries}?state=delivered`))).entries).toEqual([]);
    // The attempt the retry makes takes a while to answer, so the delivery is seen waiting for it.
    receiver.script('/down', [{ status: 200, delayMs: 600 }]);
    expect((await server.call('POST', `${deliveries}/${failed.id}/retry`)).status).toBe(202);
    const due = (await json(await server.call('GET', deliveries))).entries[0];
    expect(due.state).toBe('pending');
    // Due now, by the server's clock: the time of the retry, not the epoch.
    expect(Date.parse(due.nextAttempt)).toBe(server.clock.now());
    await waitFor(async () => (await json(await server.call('GET', deliveries))).entries[0]?.state === 'delivered');
    expect(receiver.at('/down')).toHaveLength(5);
    expect((await json(await server.call('GET', `${deliveries}?state=failed`))).entries).toEqual([]);
    expect((await json(await server.call('GET', `${deliveries}?state=delivered`))).entries).toHaveLength(1);
    await server.call('DELETE', `/v1/webhooks/${hook.id}`);
  });
});

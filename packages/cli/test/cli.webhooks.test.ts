import { Receiver, startServer, type TestServer, waitFor } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envOf, warren } from './run.js';

describe('warren events and warren webhooks', () => {
  let server: TestServer;
  let env: Record<string, string>;
  const receiver = new Receiver();
  beforeAll(async () => {
    await receiver.start();
    server = await startServer({ settings: { webhooksAllowPrivate: true, eventDetectorIntervalMs: 3_600_000 } });
    env = envOf(server);
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  it('creates an endpoint, prints its secret once, tests it and lists its deliveries', async () => {
    const created = await warren(
      ['webhooks', 'create', `${receiver.url}/cli`, '--event', 'user.*', '--event', 'webhook.test'],
      env,
    );
    expect(created.code).toBe(0);
    const id = /^id +(whk_\w+)$/m.exec(created.stdout)?.[1];
    expect(id).toBeDefined();
    expect(created.stdout).toMatch(/^secret +whsec_\S+$/m);
    expect(created.stderr).toContain('not shown again');
    const shown = await warren(['webhooks', 'get', id!], env);
    expect(shown.stdout).not.toContain('whsec_');
    expect((await warren(['webhooks', 'list'], env)).stdout).toMatch(
      new RegExp(`^${id} +${receiver.url}/cli +user\\.\\*,webhook\\.test +yes`, 'm'),
    );

    expect((await warren(['webhooks', 'test', id!], env)).code).toBe(0);
    await waitFor(() => receiver.at('/cli').length === 1);
    // The server records a delivery's outcome once the receiver has answered, so a moment later.
    const recorded = () =>
      server.database.storage.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', id!).execute();
    await waitFor(async () => (await recorded()).length === 1);
    const deliveries = await warren(['webhooks', 'deliveries', id!, '--json'], env);
    const lines = deliveries.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([expect.objectContaining({ type: 'webhook.test', state: 'delivered', attempts: 1 })]);
    const retried = await warren(['webhooks', 'retry', id!, lines[0].id], env);
    expect(retried.code).toBe(0);
    await waitFor(() => receiver.at('/cli').length === 2);

    const rotated = await warren(['webhooks', 'rotate', id!], env);
    expect(rotated.stdout).toMatch(/^whsec_\S+\n$/);
    const disabled = await warren(['webhooks', 'update', id!, '--disable'], env);
    expect(disabled.stdout).toMatch(/^enabled +no \(disabled by request\)$/m);
    expect((await warren(['webhooks', 'update', id!, '--enable', '--disable'], env)).code).toBe(2);
    expect((await warren(['webhooks', 'delete', id!], env)).stdout).toBe(`deleted webhook ${id}\n`);
  });

  it('lists events with a type family, as a table and as JSON lines', async () => {
    await warren(['users', 'add', 'eve@example.com'], env);
    const table = await warren(['events', '--since', '1h', '--type', 'user.*'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^TIME +TYPE +SUBJECT +BY$/m);
    expect(table.stdout).toMatch(/ user\.created +usr_\w+ +initial \(key_\w+\)$/m);
    const json = await warren(['events', '--type', 'user.created', '--json'], env);
    const events = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events.every((e) => e.type === 'user.created')).toBe(true);
    expect(events.at(-1).data.user.loginName).toBe('eve@example.com');
  });
});

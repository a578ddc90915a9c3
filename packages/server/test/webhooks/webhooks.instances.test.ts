/**
 * Two instances on one database (run with WARREN_TEST_BACKEND=postgres for the multi-instance
 * case that matters): each attempt of each delivery is made by one of them, never both.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { json, startServer, type TestServer } from '../harness.js';
import { Receiver, waitFor } from './receiver.js';

const settings = {
  webhooksAllowPrivate: true,
  webhookRetryScheduleMs: [50, 50, 50],
  eventDetectorIntervalMs: 3_600_000,
};

describe('webhook delivery with two instances', () => {
  let server: TestServer;
  let second: FastifyInstance;
  let secondStorage: Storage;
  const receiver = new Receiver();
  beforeAll(async () => {
    await receiver.start();
    server = await startServer({ settings });
    const { url, schema } = server.database;
    secondStorage = await openStorage(url, schema ? { schema, poolSize: 5 } : {});
    second = await buildApp({
      storage: secondStorage,
      clock: server.clock,
      settings: { apiRateLimit: 100_000, ...settings },
    });
  });
  afterAll(async () => {
    await second.close();
    await secondStorage.close();
    await server.close();
    await receiver.close();
  });

  it('delivers each event once per attempt', async () => {
    receiver.script('/shared', [500, 500, 500]);
    const hook = await json(
      await server.call('POST', '/v1/webhooks', { body: { url: `${receiver.url}/shared`, events: ['user.created'] } }),
    );
    const count = 25;
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        server.call('POST', '/v1/users', { body: { loginName: `u${i}@example.com` } }),
      ),
    );
    const delivered = async () => {
      const page = await json(await server.call('GET', `/v1/webhooks/${hook.id}/deliveries?limit=1000`));
      return page.entries as { eventId: string; state: string; attempts: number }[];
    };
    await waitFor(async () => (await delivered()).filter((d) => d.state === 'delivered').length === count, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const received = new Map<string, number>();
    for (const r of receiver.at('/shared')) {
      const id = String(r.headers['webhook-id']);
      received.set(id, (received.get(id) ?? 0) + 1);
    }
    const deliveries = await delivered();
    expect(deliveries).toHaveLength(count);
    for (const d of deliveries) expect(received.get(d.eventId), d.eventId).toBe(d.attempts);
    expect(receiver.at('/shared')).toHaveLength(count + 3);
  });

  it('keeps the secret each concurrent rotation answered: the last one signs, the one before beside it', async () => {
    const hook = await json(
      await server.call('POST', '/v1/webhooks', {
        body: { url: `${receiver.url}/rotations`, events: ['user.deleted'] },
      }),
    );
    // Rotations through both instances at once: each answers a secret that must sign.
    for (let round = 0; round < 5; round++) {
      const path = `/v1/webhooks/${hook.id}/rotate`;
      const viaFirst = async () => (await json(await server.call('POST', path))).secret as string;
      const viaSecond = async () =>
        (
          await second.inject({ method: 'POST', url: path, headers: { authorization: `Bearer ${server.apiKey}` } })
        ).json().secret as string;
      const answers = await Promise.all([viaFirst(), viaSecond(), viaFirst(), viaSecond()]);
      const row = await server.database.storage.db
        .selectFrom('webhooks')
        .select(['secret', 'previous_secret'])
        .where('id', '=', hook.id)
        .executeTakeFirstOrThrow();
      // Serialised, the rotations leave the last one's secret current and the one before it
      // previous: both were answered. Read before written, two of them could keep a secret
      // that no rotation answered, and lose one that was.
      expect(answers).toContain(row.secret);
      expect(answers).toContain(row.previous_secret);
    }
    await server.call('DELETE', `/v1/webhooks/${hook.id}`);
  });
});

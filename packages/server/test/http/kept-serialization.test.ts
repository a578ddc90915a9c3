/**
 * A kept value's text is written once (http/serializers.ts), but through the route's response
 * schema like any other answer: a field the schema does not declare never leaves the server,
 * whether the value is kept or not. (A reply serialiser set for the whole app would take
 * precedence over every route's schema in Fastify.)
 */
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { keptDerivation } from '../../src/lib/kept.js';
import { freshDatabase, type TestDatabase } from '../harness.js';

describe('kept answers and response schemas', () => {
  let database: TestDatabase;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let derivations = 0;
  const rows = Object.freeze([Object.freeze({ name: 'a', secret_hash: 'never shown' })]);
  const kept = keptDerivation(([source]: readonly [typeof rows]) => {
    derivations++;
    return { value: { items: source.map((row) => ({ ...row })) }, until: Number.POSITIVE_INFINITY };
  });
  beforeAll(async () => {
    database = await freshDatabase();
    app = await buildApp({ storage: database.storage, console: false });
    const schema = {
      response: { 200: Type.Object({ items: Type.Array(Type.Object({ name: Type.String() })) }) },
    };
    app.get('/test/kept', { schema, config: { auth: 'none' } }, async () => kept([rows], 0));
    app.get('/test/fresh', { schema, config: { auth: 'none' } }, async () => ({
      items: rows.map((row) => ({ ...row })),
    }));
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await database.drop();
  });

  it('serialises a kept value through the schema, once, and the same as a fresh one', async () => {
    const first = await app.inject({ method: 'GET', url: '/test/kept' });
    const second = await app.inject({ method: 'GET', url: '/test/kept' });
    const fresh = await app.inject({ method: 'GET', url: '/test/fresh' });
    for (const response of [first, second, fresh]) {
      expect(response.body).toBe('{"items":[{"name":"a"}]}');
    }
    expect(derivations).toBe(1);
  });
});

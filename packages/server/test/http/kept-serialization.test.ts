/**
 * A kept value's text is written once (http/serializers.ts), but through the route's response
 * schema like any other answer: a field the schema does not declare never leaves the server,
 * whether the value is kept or not. (A reply serialiser set for the whole app would take
 * precedence over every route's schema in Fastify.)
 */
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { keptJsonSerializer } from '../../src/http/serializers.js';
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

describe('the serializer of routes without a response schema (/api/v2)', () => {
  it('writes what JSON.stringify writes, a kept value once per value', () => {
    const serialize = keptJsonSerializer();
    let writes = 0;
    const written = (name: string) => {
      writes++;
      return { name };
    };
    const make = (name: string) =>
      keptDerivation(([source]: readonly [object]) => ({
        value: { name, source, toJSON: () => written(name) },
        until: Number.POSITIVE_INFINITY,
      }))([Object.freeze({})], 0);
    const one = make('a');
    expect(serialize(one)).toBe('{"name":"a"}');
    expect(serialize(one)).toBe('{"name":"a"}');
    expect(writes).toBe(1);
    // Another kept value (a change makes a new one) is written afresh; a value not kept every time.
    expect(serialize(make('b'))).toBe('{"name":"b"}');
    expect(writes).toBe(2);
    const fresh = { name: 'c', toJSON: () => written('c') };
    expect(serialize(fresh)).toBe('{"name":"c"}');
    expect(serialize(fresh)).toBe('{"name":"c"}');
    expect(writes).toBe(4);
  });
});

/**
 * The contract's scope table, held against every operation that changes something: each is
 * refused (403 insufficient_scope, naming its scope) to a key of every other single scope, and
 * passes the scope check for a key of its own. The operations come from the OpenAPI document
 * the server serves, so a new one is held to the table without a change here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';

const SCOPES = ['read', 'devices', 'acls', 'keys', 'users', 'webhooks'] as const;

/** The scope that suffices for a change, by resource (API.md, "Authentication and scopes"). */
function scopeFor(path: string): string {
  if (path.startsWith('/v1/devices') || path.startsWith('/v1/routes')) return 'devices';
  if (path.startsWith('/v1/acl')) return 'acls';
  if (path.startsWith('/v1/keys')) return 'keys';
  if (path.startsWith('/v1/users')) return 'users';
  if (path.startsWith('/v1/webhooks')) return 'webhooks';
  // The network's settings and single sign-on: only `all`.
  return 'all';
}

type Operation = { method: string; path: string };

describe('scopes of every operation that changes something', () => {
  let server: TestServer;
  let operations: Operation[];
  const keys = new Map<string, string>();

  beforeAll(async () => {
    server = await startServer();
    const document = await json(await server.call('GET', '/v1/openapi.json'));
    operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((method) => !['get', 'head', 'parameters'].includes(method))
        // Devices' own calls take node credentials, not API keys.
        .filter(() => !path.startsWith('/v1/node/'))
        .map((method) => ({ method: method.toUpperCase(), path })),
    );
    for (const scope of SCOPES) {
      const res = await server.call('POST', '/v1/keys', {
        body: { type: 'api', name: `only-${scope}`, scopes: [scope], expiresIn: '1d' },
      });
      keys.set(scope, (await json(res)).key);
    }
  });
  afterAll(() => server.close());

  it('finds the operations in the served document', () => {
    expect(operations.length).toBeGreaterThan(20);
    expect(operations).toContainEqual({ method: 'PUT', path: '/v1/acl' });
  });

  it('refuses each to every other scope, naming its own, and lets its own scope past', async () => {
    const wrong: string[] = [];
    for (const { method, path } of operations) {
      const url = path.replace(/\{[^}]+\}/g, 'unknown_0');
      const needed = scopeFor(path);
      for (const scope of SCOPES) {
        const res = await server.call(method, url, { key: keys.get(scope)!, body: {} });
        const body = res.status === 204 ? {} : await json(res);
        const refused = res.status === 403 && body.code === 'insufficient_scope';
        if (scope === needed) {
          if (refused) wrong.push(`${method} ${path}: refused to its own scope ${scope}`);
        } else if (!refused || body.scope !== needed) {
          wrong.push(`${method} ${path} with ${scope}: ${res.status} ${body.code} ${body.scope ?? ''}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe('the refusal of a read', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('names the resource scope and says read would do as well', async () => {
    const res = await server.call('POST', '/v1/keys', {
      body: { type: 'api', name: 'only-acls', scopes: ['acls'], expiresIn: '1d' },
    });
    const body = await json(await server.call('GET', '/v1/devices', { key: (await json(res)).key }));
    expect(body).toMatchObject({
      code: 'insufficient_scope',
      scope: 'devices',
      detail: 'this call needs an API key with scope "devices" or "read" (or "all")',
    });
  });
});

/**
 * The request log: exactly one line per request, written when it is answered, with method,
 * path, status, time and request id, and never a credential or a query string.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createNetwork } from '../../src/modules/tenants/tenants.service.js';
import { freshDatabase, type TestDatabase } from '../harness.js';

describe('request log', () => {
  let database: TestDatabase;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let apiKey: string;
  const lines: any[] = [];

  beforeAll(async () => {
    database = await freshDatabase();
    ({ apiKey } = await createNetwork(database.storage.db, {
      name: 'log',
      ownerEmail: 'owner@example.com',
      plan: 'premium',
      now: Date.now(),
    }));
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    app = await buildApp({ storage: database.storage, logger: { level: 'info', stream } });
  });
  afterAll(async () => {
    await app.close();
    await database.drop();
  });

  it('writes one line per request, without the query string or the credential', async () => {
    lines.length = 0;
    const ok = await app.inject({
      method: 'GET',
      url: '/v1/devices?tag=tag:secret-looking&online=true',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(ok.statusCode).toBe(200);
    const refused = await app.inject({ method: 'GET', url: '/v1/network', headers: { authorization: 'Bearer nope' } });
    expect(refused.statusCode).toBe(401);

    const requests = lines.filter((line) => line.reqId !== undefined);
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({ method: 'GET', path: '/v1/devices', status: 200, msg: 'request' });
    expect(requests[1]).toMatchObject({ method: 'GET', path: '/v1/network', status: 401 });
    expect(requests[0].reqId).toBe(ok.headers['x-request-id'] ?? requests[0].reqId);
    for (const line of requests) expect(typeof line.ms).toBe('number');
    const text = JSON.stringify(lines);
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain('secret-looking');
    expect(text).not.toContain('Bearer');
  });

  it('writes no secret sent in the path', async () => {
    lines.length = 0;
    const pasted = await app.inject({
      method: 'GET',
      url: `/v1/keys/${apiKey}`,
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(pasted.statusCode).toBe(404);
    expect(lines.find((line) => line.msg === 'request')).toMatchObject({ path: '/v1/keys/wrn_api_…', status: 404 });
    expect(JSON.stringify(lines)).not.toContain(apiKey);
  });

  it("writes no one-time link's token, over HTTP, on every route that carries one", async () => {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const token = randomBytes(32).toString('base64url');
    const calls: [string, string, string][] = [
      ['GET', `/register/${token}`, '/register/…'],
      ['GET', `/auth/register/${token}`, '/auth/register/…'],
      ['POST', `/auth/register/${token}/approve`, '/auth/register/…/approve'],
      ['GET', `/ssh-check/${token}`, '/ssh-check/…'],
      ['GET', `/auth/ssh-check/${token}`, '/auth/ssh-check/…'],
      ['POST', `/auth/ssh-check/${token}/approve`, '/auth/ssh-check/…/approve'],
      ['GET', `/machine/ssh/check/net_1/${token}`, '/machine/ssh/check/net_1/…'],
    ];
    lines.length = 0;
    for (const [method, path] of calls) await fetch(`${base}${path}`, { method });

    const logged = lines.filter((line) => line.msg === 'request').map((line) => [line.method, line.path]);
    expect(logged).toEqual(calls.map(([method, , path]) => [method, path]));
    expect(JSON.stringify(lines)).not.toContain(token);
  });
});

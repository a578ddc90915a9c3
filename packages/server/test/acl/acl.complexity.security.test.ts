/**
 * One policy must never stop the server for everyone: validation runs in a worker thread, and
 * a document that outlives the time budget is refused with 422 policy_too_complex, changing
 * nothing. The bad input is sent over a raw socket, as an attacker would send it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netmapEpoch } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { rawSocket } from '../http/raw-http.js';
import { SHAPES, sizeFor } from '../policy/adversarial-shapes.js';

// The linear but heaviest shape at about 1 MiB: well over a 50 ms budget on any machine.
const tests = SHAPES.find((s) => s.name === 'tests');
if (!tests) throw new Error('missing shape');
const HEAVY = tests.build(sizeFor(tests, 1000 * 1024));

function post(server: TestServer, method: string, path: string, body: string) {
  const head = [
    `${method} ${path} HTTP/1.1`,
    'Host: warren.test',
    `Authorization: Bearer ${server.apiKey}`,
    'Content-Type: application/hujson',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  return rawSocket(server.url, `${head.join('\r\n')}\r\n\r\n${body}`);
}

describe('a policy over the time budget', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ settings: { policyTimeBudgetMs: 50 } });
  });
  afterAll(() => server.close());

  it('is refused by validate and by PUT with 422 policy_too_complex, and nothing changes', async () => {
    const history = async () => (await json(await server.call('GET', '/v1/acl/history'))).versions.length;
    const before = { versions: await history(), epoch: await netmapEpoch(server) };
    for (const [method, path] of [
      ['POST', '/v1/acl/validate'],
      ['PUT', '/v1/acl'],
    ]) {
      const res = await post(server, method, path, HEAVY);
      expect(res.status, res.body).toBe(422);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const body = JSON.parse(res.body);
      expect(body).toMatchObject({ status: 422, code: 'policy_too_complex', title: 'Unprocessable Content' });
      expect(body.detail).toContain('nothing was changed');
      expect(body.requestId).toBe(res.headers['x-request-id']);
    }
    expect(await history()).toBe(before.versions);
    expect(await netmapEpoch(server)).toBe(before.epoch);
    // The worker that was stopped is replaced: a small policy is still validated.
    const small = await post(
      server,
      'POST',
      '/v1/acl/validate',
      '{ "groups": { "group:a": ["ana@example.com"] }, "acls": [] }',
    );
    expect(small.status, small.body).toBe(200);
    expect(JSON.parse(small.body)).toMatchObject({ valid: true, errors: [] });
  }, 90_000); // three worker starts: seconds each on a busy machine
});

describe('a policy within the budget', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ settings: { policyTimeBudgetMs: 60_000 } });
  });
  afterAll(() => server.close());

  it('is validated off the event loop: /healthz answers while it runs', async () => {
    await post(server, 'POST', '/v1/acl/validate', '{}'); // the worker is started
    const order: string[] = [];
    const validating = post(server, 'POST', '/v1/acl/validate', HEAVY).then((res) => {
      order.push('validate');
      return res;
    });
    const health = await fetch(`${server.url}/healthz`);
    order.push('healthz');
    expect(health.status).toBe(200);
    const res = await validating;
    expect(res.status, res.body.slice(0, 300)).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ valid: true, errors: [] });
    expect(order).toEqual(['healthz', 'validate']);
  }, 90_000);

  it('lists at most 1,000 problems, then says how many more there are', async () => {
    const values = Array.from({ length: 5_000 }, () => '1').join(',');
    const res = await post(server, 'POST', '/v1/acl/validate', `{ "groups": { "group:a": [${values}] }, "acls": [] }`);
    expect(res.status).toBe(200);
    const body = JSON.parse(res.body);
    expect(body.valid).toBe(false);
    expect(body.errors).toHaveLength(1_001);
    expect(body.errors[1_000].msg).toBe('4000 more problems from here on (only the first 1000 are listed)');
  });
});

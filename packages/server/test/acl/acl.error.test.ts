import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, netmapEpoch } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { applyPolicy, HUJSON, policyText, putPolicy, validate } from './helpers.js';

const BROKEN = `{
  "acls": [
    { "action": "accept", "src": ["group:nope"], "dst": ["*:22"] },
    { "action": "deny", "src": ["*"], "dst": ["*:*"] },
  ],
}
`;
const BROKEN_ERRORS = [
  { line: 3, column: 35, msg: expect.stringContaining('"group:nope" is not defined') },
  { line: 4, column: 17, msg: expect.stringContaining('"deny" is not supported') },
  { line: 4, column: 47, msg: expect.stringContaining('over-permissive') },
];
const GOOD = (n: number) =>
  `{ "acls": [{ "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:${n}"] }] }`;

describe('PUT /v1/acl refusals', () => {
  let server: TestServer;
  let versions: () => Promise<number>;
  beforeAll(async () => {
    server = await startServer();
    versions = async () => (await json(await server.call('GET', '/v1/acl/history'))).versions.length;
  });
  afterAll(() => server.close());

  it('refuses an invalid policy with every problem at its line and column, changing nothing', async () => {
    const before = await policyText(server);
    const count = await versions();
    const epoch = await netmapEpoch(server);
    const body = await expectProblem(await putPolicy(server, BROKEN), 400, 'policy_invalid');
    expect(body.errors).toEqual(BROKEN_ERRORS);
    expect(body.detail).toBe('the policy has 3 problems');
    expect(await policyText(server)).toEqual(before);
    expect(await versions()).toBe(count);
    expect(await netmapEpoch(server)).toBe(epoch);
  });

  it('reports syntax errors alone, and an empty body as one', async () => {
    const body = await expectProblem(await putPolicy(server, '{ "acls": [ }'), 400, 'policy_invalid');
    expect(body.errors).toEqual([{ line: 1, column: 13, msg: 'expected a value' }]);
    const empty = await expectProblem(await server.call('PUT', '/v1/acl'), 400, 'policy_invalid');
    expect(empty.errors).toEqual([{ line: 1, column: 1, msg: expect.any(String) }]);
  });

  it('refuses a stale If-Match with 412 and changes nothing', async () => {
    const stale = await applyPolicy(server, GOOD(1));
    const current = await applyPolicy(server, GOOD(2));
    const count = await versions();
    for (const ifMatch of [stale, stale.slice(1, -1), `W/${current}`, '"bogus"']) {
      const body = await expectProblem(
        await putPolicy(server, GOOD(3), { 'if-match': ifMatch }),
        412,
        'precondition_failed',
      );
      expect(body.detail).toContain(current);
    }
    expect((await policyText(server)).etag).toBe(current);
    expect(await versions()).toBe(count);
  });

  it('refuses a PUT whose If-None-Match names the current policy, or *, with 412 and changes nothing', async () => {
    const current = await applyPolicy(server, GOOD(4));
    const count = await versions();
    const events = async () =>
      (await json(await server.call('GET', '/v1/events?since=1d&type=policy.updated&limit=1000'))).entries.length;
    const announced = await events();
    for (const ifNoneMatch of ['*', current, current.slice(1, -1), `W/${current}`, `"other", ${current}`]) {
      await expectProblem(
        await putPolicy(server, GOOD(5), { 'if-none-match': ifNoneMatch }),
        412,
        'precondition_failed',
      );
    }
    expect((await policyText(server)).etag).toBe(current);
    expect(await versions()).toBe(count);
    expect(await events()).toBe(announced);
    // An If-None-Match naming only other versions holds.
    expect((await putPolicy(server, GOOD(5), { 'if-none-match': '"other"' })).status).toBe(200);
  });

  it('lets exactly one of two concurrent PUTs with the same If-Match win', async () => {
    for (let round = 0; round < 5; round++) {
      const { etag } = await policyText(server);
      const count = await versions();
      const results = await Promise.all(
        [10, 11, 12].map((n) => putPolicy(server, GOOD(n + round * 10), { 'if-match': etag })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 412, 412]);
      const winner = results.find((r) => r.status === 200)!;
      expect((await policyText(server)).etag).toBe(winner.headers.get('etag'));
      expect(await versions()).toBe(count + 1);
    }
  });

  it('refuses other media types (415) and bodies over 1 MiB (413)', async () => {
    const before = await policyText(server);
    await expectProblem(
      await server.call('PUT', '/v1/acl', { raw: GOOD(4), headers: { 'content-type': 'application/xml' } }),
      415,
      'unsupported_media_type',
    );
    await expectProblem(
      await server.call('POST', '/v1/acl/validate', { raw: GOOD(4), headers: { 'content-type': 'image/png' } }),
      415,
      'unsupported_media_type',
    );
    const huge = `${GOOD(5)}\n// ${'x'.repeat(1024 * 1024)}\n`;
    await expectProblem(await putPolicy(server, huge), 413, 'payload_too_large');
    expect(await policyText(server)).toEqual(before);
  });
});

describe('POST /v1/acl/validate', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('answers 200 with the same errors PUT gives, for broken syntax too, and never changes anything', async () => {
    const before = await policyText(server);
    const epoch = await netmapEpoch(server);
    expect(await validate(server, BROKEN)).toEqual({ valid: false, errors: BROKEN_ERRORS, tests: expect.any(Array) });
    expect(await validate(server, '{ "acls": [ }')).toEqual({
      valid: false,
      errors: [{ line: 1, column: 13, msg: 'expected a value' }],
      tests: [],
    });
    expect(await validate(server, GOOD(1))).toEqual({ valid: true, errors: [], tests: expect.any(Array) });
    const asJson = await server.call('POST', '/v1/acl/validate', { body: JSON.parse(GOOD(2)) });
    expect(await json(asJson)).toEqual({ valid: true, errors: [], tests: expect.any(Array) });
    const empty = await json(await server.call('POST', '/v1/acl/validate'));
    expect(empty.valid).toBe(false);
    expect(await policyText(server)).toEqual(before);
    expect(await netmapEpoch(server)).toBe(epoch);
    const { versions } = await json(await server.call('GET', '/v1/acl/history'));
    expect(versions).toHaveLength(1);
  });

  it('answers JSON whatever the type of the body', async () => {
    const res = await server.call('POST', '/v1/acl/validate', { raw: GOOD(1), headers: { 'content-type': HUJSON } });
    expect(res.headers.get('content-type')).toContain('application/json');
  });
});

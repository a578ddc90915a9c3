/**
 * The policy file on /api/v2 as Tailscale serves it: JSON only when the caller's `Accept` names
 * `application/json`, the stored HuJSON otherwise (curl's and fetch's `*\/*`, or no `Accept`
 * at all, as Go's client sends on a POST); the quoted ETag either way. A refusal's `message` is
 * its first problem with line and column, which Tailscale's gitops-pusher annotates the file
 * with. `acl/validate` given a JSON array runs those tests against the current policy.
 * `details=1` answers the file in base64 with its warnings and errors. Failing tests are
 * reported as Tailscale does: "test(s) failed", each test's problems under its `src`.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { up as fullDigestEtags } from '../../src/storage/migrations/046_policy_etag_full_digest.js';
import { json, startServer, type TestServer } from '../harness.js';

const POLICY = `// Written by hand.
{
  "acls": [
    { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] }, // trailing comma
  ],
}
`;

describe('/api/v2 policy file', () => {
  let server: TestServer;
  const acl = (method: string, headers: Record<string, string>, raw?: string) =>
    server.call(method, '/api/v2/tailnet/-/acl', { headers, ...(raw === undefined ? {} : { raw }) });

  beforeAll(async () => {
    server = await startServer();
    const res = await acl('POST', { 'content-type': 'application/hujson', accept: 'application/json' }, POLICY);
    expect(res.status, await res.text()).toBe(200);
  });
  afterAll(() => server.close());

  it('answers HuJSON unless JSON is asked for', async () => {
    for (const accept of ['*/*', 'application/hujson', 'text/plain, */*;q=0.8', 'application/json;q=0, */*']) {
      const res = await acl('GET', { accept });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type'), accept).toMatch(/^application\/hujson/);
      expect(await res.text()).toBe(POLICY);
      expect(res.headers.get('etag')).toMatch(/^"[^"]+"$/);
    }
    const asJson = await acl('GET', { accept: 'application/json; q=1.0' });
    expect(asJson.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await json(asJson)).acls).toEqual([
      { action: 'accept', src: ['autogroup:member'], dst: ['autogroup:self:*'] },
    ]);
  });

  it('answers a change the same way, with the new ETag', async () => {
    const before = (await acl('GET', { accept: 'application/json' })).headers.get('etag');
    const changed = POLICY.replace('Written by hand.', 'Changed.');
    // Go's client sets no Accept when it sends a body (PolicyFile.SetAndGet).
    const res = await acl('POST', { 'content-type': 'application/json', 'if-match': before ?? '' }, changed);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/hujson/);
    expect(await res.text()).toBe(changed);
    expect(res.headers.get('etag')).not.toBe(before);
    const asJson = await acl('POST', { 'content-type': 'application/hujson', accept: 'application/json' }, changed);
    expect(asJson.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Array.isArray((await json(asJson)).acls)).toBe(true);
  });

  it("gives as ETag the file's SHA-256, which gitops-pusher compares with its copy's", async () => {
    // gitops-pusher decides "no update needed", and tells a manual edit from its own push, by
    // comparing the ETag with sha256(file) in hex; a hujson-formatted file is stored as sent.
    const file =
      '{\n\t"acls": [\n\t\t{"action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"]},\n\t],\n}\n';
    const digest = `"${createHash('sha256').update(file).digest('hex')}"`;
    const current = (await acl('GET', {})).headers.get('etag') ?? '';
    const res = await acl('POST', { 'content-type': 'application/hujson', 'if-match': current }, file);
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe(digest);
    expect((await acl('GET', { accept: 'application/hujson' })).headers.get('etag')).toBe(digest);
    expect((await server.call('GET', '/v1/acl')).headers.get('etag')).toBe(digest);

    // A policy stored before the ETag was the whole digest gets it on upgrade: its first
    // apply by the pusher would otherwise look like someone else's edit.
    await server.database.storage.db
      .updateTable('policies')
      .set({ etag: `${digest.slice(0, 33)}"` })
      .execute();
    await fullDigestEtags(server.database.storage.db as unknown as Kysely<unknown>);
    expect((await acl('GET', {})).headers.get('etag')).toBe(digest);
  });

  it('reads If-Match as /v1 does beside ts-default: *, bare or listed ETags, weak ones never matching', async () => {
    const etag = async () => (await acl('GET', {})).headers.get('etag') ?? '';
    let n = 0;
    const post = async (ifMatch: string) => {
      n += 1;
      const text = POLICY.replace('Written by hand.', `If-Match ${n}.`);
      return acl('POST', { 'content-type': 'application/hujson', 'if-match': ifMatch }, text);
    };
    for (const ifMatch of ['*', async () => (await etag()).slice(1, -1), async () => `"stale", ${await etag()}`]) {
      const header = typeof ifMatch === 'string' ? ifMatch : await ifMatch();
      const res = await post(header);
      expect(res.status, `If-Match: ${header}: ${await res.clone().text()}`).toBe(200);
    }
    const stored = await etag();
    for (const header of [`W/${stored}`, '"stale"', 'W/"ts-default"']) {
      const res = await post(header);
      expect(res.status, `If-Match: ${header}`).toBe(412);
      expect(await json(res)).toMatchObject({ status: 412, code: 'precondition_failed' });
    }
    expect(await etag()).toBe(stored);
  });

  it("words a refusal's message as line, column and problem, the rest in data", async () => {
    // gitops-pusher's reading of Tailscale's message (cmd/gitops-pusher, lineColMessageSplit).
    const GITOPS = /^line ([0-9]+), column ([0-9]+): (.*)$/;
    const one = '{\n  "acls": [\n    { "action": "accept", "src": ["*"], "dst": ["nope"] },\n  ],\n}';
    const refused = await acl('POST', { 'content-type': 'application/hujson' }, one);
    expect(refused.status).toBe(400);
    const body = await json(refused);
    expect(body.message).toMatch(GITOPS);
    expect(body.message.match(GITOPS)?.[1]).toBe('3');
    expect(body.data[0].errors).toEqual([body.message]);

    const two = one.replace('"src": ["*"]', '"src": ["group:none"]');
    const validated = await json(
      await server.call('POST', '/api/v2/tailnet/-/acl/validate', {
        raw: two,
        headers: { 'content-type': 'application/hujson' },
      }),
    );
    expect(validated.data[0].errors.length).toBe(2);
    expect(validated.message).toMatch(GITOPS);
    expect(validated.message).toBe(`${validated.data[0].errors[0]} (and 1 more in data)`);
  });

  it('runs a JSON array of tests against the current policy, changing nothing', async () => {
    const before = await acl('GET', { accept: 'application/hujson' });
    const [text, etag] = [await before.text(), before.headers.get('etag')];
    const validate = async (tests: unknown) => {
      const res = await server.call('POST', '/api/v2/tailnet/-/acl/validate', { body: tests });
      expect(res.status).toBe(200);
      return json(res);
    };
    expect(await validate([{ src: 'owner@example.com', accept: ['owner@example.com:22'] }])).toEqual({});
    const failed = await validate([
      { src: 'owner@example.com', accept: ['owner@example.com:22'] },
      { src: 'owner@example.com', deny: ['owner@example.com:443'] },
    ]);
    expect(failed.message).toBe('test(s) failed');
    expect(failed.data).toHaveLength(1);
    expect(failed.data[0].user).toBe('owner@example.com');
    // The rule that accepts is named by its line in the stored file.
    const ruleLine = text.split('\n').findIndex((line) => line.includes('"action": "accept"')) + 1;
    expect(failed.data[0].errors[0]).toContain(`line ${ruleLine}`);
    const malformed = await validate([{ accept: ['owner@example.com:22'] }]);
    expect(malformed.data[0].errors[0]).toMatch(/src/);
    const after = await acl('GET', { accept: 'application/hujson' });
    expect([await after.text(), after.headers.get('etag')]).toEqual([text, etag]);
  });

  it('answers details=1 with the file in base64, its warnings and errors', async () => {
    const file = await acl('GET', { accept: 'application/hujson' });
    const [text, etag] = [await file.text(), file.headers.get('etag')];
    const res = await server.call('GET', '/api/v2/tailnet/-/acl?details=1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('etag')).toBe(etag);
    const body = await json(res);
    expect(body).toEqual({ acl: Buffer.from(text).toString('base64'), warnings: [], errors: null });
    expect(Buffer.from(body.acl, 'base64').toString()).toBe(text);
    const plain = await server.call('GET', '/api/v2/tailnet/-/acl?details=0');
    expect(await plain.text()).toBe(text);
    expect(await json(await server.call('GET', '/api/v2/tailnet/-/acl?details=true'))).toEqual(body);
    // A value that is neither yes nor no is refused, as keys' `all` is.
    for (const details of ['yes', '2', 'TRUE']) {
      const refused = await server.call('GET', `/api/v2/tailnet/-/acl?details=${details}`);
      expect(refused.status, details).toBe(400);
      expect(await json(refused)).toMatchObject({ status: 400, code: 'invalid_request' });
    }
  });

  it("reports failing tests under their src, as Tailscale's test(s) failed", async () => {
    const before = await acl('GET', { accept: 'application/hujson' });
    const failing = POLICY.replace(
      '"acls": [',
      '"tests": [{ "src": "owner@example.com", "deny": ["owner@example.com:22"] }],\n  "acls": [',
    );
    const refused = await acl('POST', { 'content-type': 'application/hujson' }, failing);
    expect(refused.status).toBe(400);
    const body = await json(refused);
    expect(body).toMatchObject({ message: 'test(s) failed', status: 400, code: 'policy_invalid' });
    expect(body.data).toEqual([
      { user: 'owner@example.com', errors: [expect.stringMatching(/^line 3, column \d+: /)] },
    ]);
    const validated = await json(
      await server.call('POST', '/api/v2/tailnet/-/acl/validate', {
        raw: failing,
        headers: { 'content-type': 'application/hujson' },
      }),
    );
    expect(validated).toEqual({ message: body.message, data: body.data });
    const after = await acl('GET', { accept: 'application/hujson' });
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
  });
});

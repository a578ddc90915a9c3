import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../src/policy/index.js';
import { auditEntries, netmapEpoch } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { applyPolicy, HUJSON, policyText, putPolicy } from './helpers.js';

const COMMENTED = `// who may reach what
{
  /* groups of people */
  "groups": { "group:eng": ["ana@example.com"] },
  "acls": [
    // engineers reach their own devices
    { "action": "accept", "src": ["group:eng"], "dst": ["autogroup:self:22"] },
  ],
}
`;

describe('GET and PUT /v1/acl', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('serves the default policy as JSON, or verbatim as HuJSON, with a quoted ETag', async () => {
    const res = await server.call('GET', '/v1/acl');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const etag = res.headers.get('etag');
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    const doc = await json(res);
    expect(doc.acls).toHaveLength(2);
    expect(doc.tagOwners).toEqual({});

    const text = await server.call('GET', '/v1/acl', { headers: { accept: HUJSON } });
    expect(text.headers.get('content-type')).toContain(HUJSON);
    expect(text.headers.get('etag')).toBe(etag);
    expect(await text.text()).toBe(DEFAULT_POLICY);
  });

  it('reads Accept as HTTP does: media types without regard to case, q=0 as a refusal, q as a preference', async () => {
    const served = async (accept: string) =>
      (await server.call('GET', '/v1/acl', { headers: { accept } })).headers.get('content-type');
    for (const accept of [
      'Application/HuJSON',
      'application/json;q=0.5, application/hujson',
      'text/plain, application/hujson;q=0.1',
    ]) {
      expect(await served(accept), accept).toContain(HUJSON);
    }
    for (const accept of [
      'application/hujson;q=0',
      'application/hujson;q=0, application/json',
      'application/hujson;q=0.5, application/json',
    ]) {
      expect(await served(accept), accept).toContain('application/json');
    }
  });

  it('stores HuJSON verbatim: comments survive in the text and are dropped from the JSON', async () => {
    const res = await putPolicy(server, COMMENTED);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const etag = res.headers.get('etag')!;
    const stored = await json(res);
    expect(stored).toEqual({
      groups: { 'group:eng': ['ana@example.com'] },
      acls: [{ action: 'accept', src: ['group:eng'], dst: ['autogroup:self:22'] }],
    });
    expect(await policyText(server)).toEqual({ text: COMMENTED, etag });
    const asJson = await server.call('GET', '/v1/acl');
    expect(await json(asJson)).toEqual(stored);
    expect(asJson.headers.get('etag')).toBe(etag);
  });

  it('takes JSON, plain text, curl --data-binary (form type) and a body without a content type, all verbatim', async () => {
    const plain = '{"acls":[{"action":"accept","src":["autogroup:member"],"dst":["autogroup:self:*"]}]}';
    for (const headers of [
      { 'content-type': 'application/json' },
      { 'content-type': 'text/plain; charset=utf-8' },
      { 'content-type': 'application/x-www-form-urlencoded' },
    ]) {
      const text = `${plain}\n// ${headers['content-type']}\n`;
      const res = await server.call('PUT', '/v1/acl', { raw: text, headers });
      expect(res.status).toBe(200);
      expect((await policyText(server)).text).toBe(text);
    }
    // fetch always sends a content type with a string body; a Blob without a type sends none.
    const bare = `${plain} // no content type`;
    const res = await fetch(`${server.url}/v1/acl`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${server.apiKey}` },
      body: new Blob([bare]),
    });
    expect(res.status).toBe(200);
    expect((await policyText(server)).text).toBe(bare);
  });

  it('accepts a matching If-Match, quoted, bare or *', async () => {
    let { etag } = await policyText(server);
    const forms = [(e: string) => e, (e: string) => e.slice(1, -1), () => '*', (e: string) => `"nope", ${e}`];
    for (const form of forms) {
      const ifMatch = form(etag);
      const res = await putPolicy(server, `${COMMENTED}// ${ifMatch}\n`, { 'if-match': ifMatch });
      expect(res.status, ifMatch).toBe(200);
      const next = res.headers.get('etag')!;
      expect(next).not.toBe(etag);
      etag = next;
    }
  });

  it('answers a GET whose If-None-Match names the current ETag with 304, and the policy once it changed', async () => {
    const { etag } = await policyText(server);
    for (const held of [etag, etag.slice(1, -1), `W/${etag}`, `"nope", ${etag}`, '*']) {
      const res = await server.call('GET', '/v1/acl', { headers: { 'if-none-match': held } });
      expect(res.status, held).toBe(304);
      expect(res.headers.get('etag')).toBe(etag);
      expect(await res.text()).toBe('');
    }
    const stale = await server.call('GET', '/v1/acl', { headers: { 'if-none-match': '"stale"' } });
    expect(stale.status).toBe(200);
    await putPolicy(server, `${COMMENTED}// changed after it was read\n`);
    const changed = await server.call('GET', '/v1/acl', {
      headers: { 'if-none-match': etag, accept: 'application/hujson' },
    });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toContain('changed after it was read');
  });

  it('keeps every version: history newest first, each text as it was sent', async () => {
    const first = await applyPolicy(server, `${COMMENTED}// v-a\n`);
    const second = await applyPolicy(server, `${COMMENTED}// v-b\n`);
    const res = await server.call('GET', '/v1/acl/history');
    expect(res.status).toBe(200);
    const { versions } = await json(res);
    expect(versions[0]).toEqual({
      version: expect.any(Number),
      etag: second,
      created: expect.any(String),
      createdBy: 'initial',
    });
    expect(versions[1].etag).toBe(first);
    expect(versions.at(-1)).toMatchObject({ version: 1, createdBy: 'warren init' });
    expect(versions.map((v: any) => v.version)).toEqual(
      [...versions.map((v: any) => v.version)].sort((a: number, b: number) => b - a),
    );

    const old = await server.call('GET', `/v1/acl/history/${versions[1].version}`);
    expect(old.status).toBe(200);
    expect(old.headers.get('content-type')).toContain(HUJSON);
    expect(old.headers.get('etag')).toBe(first);
    expect(await old.text()).toBe(`${COMMENTED}// v-a\n`);
    expect(await (await server.call('GET', '/v1/acl/history/1')).text()).toBe(DEFAULT_POLICY);
    expect((await server.call('GET', '/v1/acl/history/99999')).status).toBe(404);
    expect((await server.call('GET', '/v1/acl/history/zero')).status).toBe(400);
  });

  it('stores no version and announces nothing for the text stored already, and audits the call', async () => {
    const etag = await applyPolicy(server, `${COMMENTED}// once\n`);
    const versions = async () => (await json(await server.call('GET', '/v1/acl/history'))).versions;
    const before = await versions();
    const events = await json(await server.call('GET', '/v1/events?since=1h&type=policy.updated&limit=1000'));
    const epoch = await netmapEpoch(server);
    const again = await putPolicy(server, `${COMMENTED}// once\n`, { 'if-match': etag });
    expect(again.status).toBe(200);
    expect(again.headers.get('etag')).toBe(etag);
    expect(await versions()).toEqual(before);
    // Nothing changed, so no instance is told to look at its netmaps again.
    expect(await netmapEpoch(server)).toBe(epoch);
    const after = await json(await server.call('GET', `/v1/events?cursor=${events.nextCursor}&type=policy.updated`));
    expect(after.entries).toEqual([]);
    // The If-Match rule holds for it too.
    expect((await putPolicy(server, `${COMMENTED}// once\n`, { 'if-match': '"stale"' })).status).toBe(412);
    await server.app.ctx.audit.flush();
    const entry = (await auditEntries(server)).find((e) => e.requestId === again.headers.get('x-request-id'));
    expect(entry).toMatchObject({
      method: 'PUT',
      path: '/v1/acl',
      status: 200,
      action: 'policy.update',
      target: 'acl',
    });
  });

  it('audits each change as policy.update on target acl, by the key that made it', async () => {
    const etag = await applyPolicy(server, `${COMMENTED}// audited\n`);
    await server.app.ctx.audit.flush();
    const entry = (await auditEntries(server)).filter((e) => e.action === 'policy.update').at(-1);
    expect(entry).toMatchObject({ method: 'PUT', path: '/v1/acl', status: 200, target: 'acl', keyName: 'initial' });
    expect(etag).toMatch(/^"/);
  });

  it('lets a read key GET the policy but not change or validate it; an acls key may', async () => {
    const make = async (scopes: string[]) =>
      (await json(await server.call('POST', '/v1/keys', { body: { type: 'api', name: scopes.join('+'), scopes } })))
        .key;
    const read = await make(['read']);
    const acls = await make(['acls']);
    const devices = await make(['devices']);
    expect((await server.call('GET', '/v1/acl', { key: read })).status).toBe(200);
    expect((await server.call('GET', '/v1/acl/history', { key: read })).status).toBe(200);
    expect((await putPolicy(server, COMMENTED, {}, read)).status).toBe(403);
    const validateWith = (key: string) =>
      server.call('POST', '/v1/acl/validate', { key, raw: COMMENTED, headers: { 'content-type': HUJSON } });
    expect((await validateWith(read)).status).toBe(403);
    expect((await server.call('GET', '/v1/acl', { key: devices })).status).toBe(403);
    expect((await server.call('GET', '/v1/acl', { key: acls })).status).toBe(200);
    expect((await validateWith(acls)).status).toBe(200);
    const res = await putPolicy(server, `${COMMENTED}// by acls key\n`, {}, acls);
    expect(res.status).toBe(200);
    const { versions } = await json(await server.call('GET', '/v1/acl/history'));
    expect(versions[0].createdBy).toBe('acls');
  });
});

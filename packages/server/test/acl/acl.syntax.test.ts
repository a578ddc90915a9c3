// PUT /v1/acl and POST /v1/acl/validate with Tailscale's newer syntax: grants, protocol numbers,
// exit-node approvers, deny tests over port ranges; and over-permissive spellings refused over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../devices/helpers.js';
import { startServer, type TestServer } from '../harness.js';
import { applyPolicy, policyText, putPolicy, validate } from './helpers.js';

const MODERN = `{
  "groups": { "group:eng": ["ana@example.com"] },
  "tagOwners": { "tag:web": ["group:eng"], "tag:exit": ["autogroup:admin"] },
  "acls": [{ "action": "accept", "src": ["group:eng"], "dst": ["autogroup:self:*"], "proto": "6" }],
  "grants": [
    { "src": ["group:eng"], "dst": ["tag:web"], "ip": ["tcp:443", "8000-8999", "icmp:*"], "app": { "example.com/cap/x": [{}] } },
    { "src": ["group:eng"], "dst": ["autogroup:internet"], "ip": ["*"] },
  ],
  "autoApprovers": { "exitNode": ["tag:exit"] },
  "tests": [{ "src": "group:eng", "accept": ["tag:web:443", "tag:web:8000"], "deny": ["tag:web:22,9000-9999"] }],
}`;

// Every device to every port, spelled without "*".
const SPLIT = `{
  "hosts": { "all4": "0.0.0.0/0" },
  "grants": [
    { "src": ["autogroup:member", "autogroup:tagged"], "dst": ["all4"], "ip": ["1-1000", "1001-65535"] },
  ],
  "autoApprovers": { "routes": { "0.0.0.0/1": ["autogroup:member"], "128.0.0.0/1": ["*"] } },
}`;

describe('the policy endpoints and Tailscale syntax', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('stores a policy with grants, protocol numbers, exit-node approvers and port-range deny tests', async () => {
    expect(await validate(server, MODERN)).toEqual({ valid: true, errors: [], tests: expect.any(Array) });
    await applyPolicy(server, MODERN);
    expect((await policyText(server)).text).toBe(MODERN);
  });

  it('refuses autogroup:self after a tag, at the tag, as Tailscale does', async () => {
    const text = MODERN.replace(
      '"src": ["group:eng"], "dst": ["autogroup:self:*"]',
      '"src": ["tag:web", "group:eng"], "dst": ["autogroup:self:*"]',
    );
    const errors = [{ line: 4, column: 42, msg: expect.stringContaining('"tag:web" is a tag') }];
    expect(await validate(server, text)).toEqual({ valid: false, errors, tests: expect.any(Array) });
    await expectProblem(await putPolicy(server, text), 400, 'policy_invalid');
  });

  it('a file with neither acls nor grants allows nothing on /v1, and is refused from Tailscale tools on /api/v2', async () => {
    const text = '{\n  "tagOwners": { "tag:web": ["autogroup:admin"] },\n}';
    // /v1: the contract's reading, no rule, nothing allowed.
    expect(await validate(server, text)).toMatchObject({ valid: true, errors: [] });
    // /api/v2: Tailscale reads the same file as allowing everything, which Warren refuses.
    const v2 = (path: string) =>
      fetch(`${server.url}/api/v2/tailnet/-/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/hujson' },
        body: text,
      });
    const checked = (await (await v2('acl/validate')).json()) as { message: string; data: unknown[] };
    expect(checked.data).toEqual([{ user: '', errors: [expect.stringContaining('neither "acls" nor "grants"')] }]);
    const before = await policyText(server);
    const refused = await v2('acl');
    expect(refused.status).toBe(400);
    expect(await policyText(server)).toEqual(before);
  });

  it('refuses over-permissive spellings with their line and column, and changes nothing', async () => {
    const before = await policyText(server);
    const errors = [
      { line: 4, column: 64, msg: expect.stringContaining('over-permissive rule') },
      { line: 6, column: 48, msg: expect.stringContaining('over-permissive autoApprovers') },
    ];
    const body = await expectProblem(await putPolicy(server, SPLIT), 400, 'policy_invalid');
    expect(body.errors).toEqual(errors);
    expect(await validate(server, SPLIT)).toEqual({ valid: false, errors, tests: expect.any(Array) });
    expect(await policyText(server)).toEqual(before);
  });
});

/** Helpers for suites that need a policy: write one, read it back, define tags. */
import { expect } from 'vitest';
import { json, type TestServer } from '../harness.js';

export const HUJSON = 'application/hujson';

export function putPolicy(
  server: TestServer,
  text: string,
  headers: Record<string, string> = {},
  key?: string,
): Promise<Response> {
  return server.call('PUT', '/v1/acl', { raw: text, key, headers: { 'content-type': HUJSON, ...headers } });
}

/** PUTs a policy that must be accepted; returns its new ETag. */
export async function applyPolicy(server: TestServer, text: string): Promise<string> {
  const res = await putPolicy(server, text);
  const body = await res.text();
  expect(res.status, body).toBe(200);
  return res.headers.get('etag') ?? '';
}

export async function policyText(server: TestServer): Promise<{ text: string; etag: string }> {
  const res = await server.call('GET', '/v1/acl', { headers: { accept: HUJSON } });
  expect(res.status).toBe(200);
  return { text: await res.text(), etag: res.headers.get('etag') ?? '' };
}

export async function validate(
  server: TestServer,
  text: string,
): Promise<{ valid: boolean; errors: any[]; tests: any[] }> {
  const res = await server.call('POST', '/v1/acl/validate', { raw: text, headers: { 'content-type': HUJSON } });
  expect(res.status).toBe(200);
  return json(res);
}

/** The default policy's rules, with `tags` defined in tagOwners (owned by admins). */
export function policyDefining(tags: readonly string[], extra = ''): string {
  const owners = tags.map((t) => `"${t}": ["autogroup:admin"]`).join(', ');
  return `{
  "tagOwners": { ${owners} },
  "acls": [
    { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] },
    { "action": "accept", "src": ["autogroup:admin"], "dst": ["*:*"] },
  ],${extra}
}
`;
}

/**
 * Defines tags in the network's policy, keeping the default rules: tags must be in tagOwners
 * before an auth key or a device may carry them.
 */
export async function defineTags(server: TestServer, tags: readonly string[]): Promise<void> {
  await applyPolicy(server, policyDefining(tags));
}

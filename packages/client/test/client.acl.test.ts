import type { TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Warren, WarrenError } from '../src/index.js';
import { startWithClient } from './fixture.js';

const POLICY = `// ops may reach the servers
{
  "groups": { "group:ops": ["owner@example.com"] },
  "tagOwners": { "tag:server": ["group:ops"] },
  "acls": [
    { "action": "accept", "src": ["group:ops"], "dst": ["tag:server:22,443"] }, // ssh and https
  ],
}
`;

const BROKEN = `{
  "acls": [
    { "action": "accept", "src": ["group:nope"], "dst": ["tag:server:22"] },
  ],
}
`;

describe('Warren client: the policy', () => {
  let server: TestServer;
  let warren: Warren;
  beforeAll(async () => {
    ({ server, warren } = await startWithClient());
  });
  afterAll(() => server.close());

  it('reads the policy as JSON and as the stored HuJSON text, with the same ETag', async () => {
    const json = await warren.acl.get();
    expect(Array.isArray(json.policy.acls)).toBe(true);
    expect(json.etag).toBeTruthy();
    const text = await warren.acl.getText();
    expect(text.text).toContain('//');
    expect(text.etag).toBe(json.etag);
  });

  it('validates a draft: valid, or every problem with its line and column', async () => {
    expect(await warren.acl.validate(POLICY)).toEqual({ valid: true, errors: [], tests: [] });
    const result = await warren.acl.validate(BROKEN);
    expect(result.valid).toBe(false);
    expect(result.errors.length).toBeGreaterThanOrEqual(2);
    const group = result.errors.find((e) => e.msg.includes('group:nope'));
    expect(group).toMatchObject({ line: 3, column: expect.any(Number) });
    // Nothing changed.
    expect((await warren.acl.getText()).text).not.toContain('group:nope');
  });

  it('replaces the policy with If-Match, keeps the text verbatim, and refuses a stale ETag', async () => {
    const before = await warren.acl.getText();
    const applied = await warren.acl.set(POLICY, { ifMatch: before.etag });
    expect(applied.etag).not.toBe(before.etag);
    expect(applied.policy.groups).toEqual({ 'group:ops': ['owner@example.com'] });
    expect(await warren.acl.getText()).toEqual({ text: POLICY, etag: applied.etag });

    const stale = await warren.acl.set(POLICY, { ifMatch: before.etag }).catch((e) => e);
    expect(stale).toBeInstanceOf(WarrenError);
    expect(stale).toMatchObject({ status: 412, code: 'precondition_failed' });
  });

  it('an invalid policy is a WarrenError policy_invalid carrying errors[]; the stored one is unchanged', async () => {
    const before = await warren.acl.getText();
    const error = await warren.acl.set(BROKEN).catch((e) => e);
    expect(error).toBeInstanceOf(WarrenError);
    expect(error).toMatchObject({ status: 400, code: 'policy_invalid' });
    expect(error.errors.length).toBeGreaterThan(0);
    expect(error.errors[0]).toEqual({ line: expect.any(Number), column: expect.any(Number), msg: expect.any(String) });
    expect(await warren.acl.getText()).toEqual(before);
  });

  it('accepts a policy object, sent as JSON', async () => {
    const applied = await warren.acl.set({
      acls: [{ action: 'accept', src: ['autogroup:member'], dst: ['autogroup:self:*'] }],
    });
    expect(applied.policy.acls).toHaveLength(1);
    expect(await warren.acl.validate({ acls: [{ action: 'accept', src: ['*'], dst: ['*:*'] }] })).toMatchObject({
      valid: false,
    });
  });

  it('lists the stored versions, newest first, and reads one back verbatim', async () => {
    const versions = await warren.acl.history();
    expect(versions.length).toBeGreaterThanOrEqual(3);
    expect(versions[0]!.version).toBeGreaterThan(versions[1]!.version);
    const current = await warren.acl.getText();
    expect(versions[0]!.etag).toBe(current.etag);
    const policyVersion = versions.find((v) => v.version === versions.at(-1)!.version + 1)!;
    expect((await warren.acl.version(policyVersion.version)).text).toBe(POLICY);
    await expect(warren.acl.version(999)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });
});

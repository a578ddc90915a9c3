import type { TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Warren, WarrenError } from '../src/index.js';
import { startWithClient } from './fixture.js';

async function caught(promise: Promise<unknown>): Promise<WarrenError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WarrenError) return error;
    throw error;
  }
  throw new Error('expected a WarrenError');
}

describe('Warren client: errors surface as WarrenError', () => {
  let server: TestServer;
  let warren: Warren;
  beforeAll(async () => {
    ({ server, warren } = await startWithClient());
  });
  afterAll(() => server.close());

  it('404 not_found names the id', async () => {
    const error = await caught(warren.keys.get('key_doesnotexist'));
    expect(error).toMatchObject({ status: 404, code: 'not_found', errors: [] });
    expect(error.detail).toContain('key_doesnotexist');
    expect(error.requestId).toBeTruthy();
    expect(error.message).toBe(`not_found: ${error.detail}`);
  });

  it('400 with the specific code: invalid_duration, unknown_field, invalid_tag', async () => {
    expect(await caught(warren.keys.create({ expiresIn: '1w' }))).toMatchObject({
      status: 400,
      code: 'invalid_duration',
    });
    expect(await caught(warren.keys.create({ tags: ['ci'] }))).toMatchObject({ status: 400, code: 'invalid_tag' });
    const unknown = await caught(warren.users.create({ loginName: 'x@example.com', colour: 'red' } as never));
    expect(unknown).toMatchObject({ status: 400, code: 'unknown_field' });
    expect(unknown.detail).toContain('colour');
  });

  it('401 for a missing, unknown or revoked key', async () => {
    const unknown = new Warren({ url: server.url, apiKey: `wrn_api_${'x'.repeat(40)}` });
    expect(await caught(unknown.network.get())).toMatchObject({ status: 401, code: 'unauthenticated' });

    const created = await warren.keys.create({ type: 'api', name: 'short-lived', scopes: ['read'] });
    await warren.keys.delete(created.id);
    const revoked = new Warren({ url: server.url, apiKey: created.key });
    expect(await caught(revoked.network.get())).toMatchObject({ status: 401, code: 'key_revoked' });
  });

  it('403 insufficient_scope for a read-only key writing', async () => {
    const created = await warren.keys.create({ type: 'api', name: 'ro', scopes: ['read'] });
    const reader = new Warren({ url: server.url, apiKey: created.key });
    const error = await caught(reader.users.create({ loginName: 'bo@example.com' }));
    expect(error).toMatchObject({ status: 403, code: 'insufficient_scope' });
  });

  it('refuses to start without url or apiKey', () => {
    expect(() => new Warren({ url: server.url, apiKey: '' })).toThrow(/apiKey/);
    expect(() => new Warren({ url: '', apiKey: server.apiKey })).toThrow(/url/);
  });

  it('takes WARREN_URL and WARREN_API_KEY from the environment when they are not given', async () => {
    vi.stubEnv('WARREN_URL', server.url);
    vi.stubEnv('WARREN_API_KEY', server.apiKey);
    try {
      expect((await new Warren().network.get()).id).toMatch(/^net_/);
      vi.stubEnv('WARREN_API_KEY', '');
      expect(() => new Warren()).toThrow(/WARREN_API_KEY/);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

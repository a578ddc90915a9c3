import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';

describe('log query parameters', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('documents each log with its own filter only: device for connections, key for the audit log', async () => {
    const doc = await json(await server.call('GET', '/v1/openapi.json'));
    const names = (path: string) => (doc.paths[path].get.parameters as { name: string }[]).map((p) => p.name).sort();
    expect(names('/v1/logs/connections')).toEqual(['cursor', 'device', 'limit', 'since']);
    expect(names('/v1/logs/audit')).toEqual(['cursor', 'key', 'limit', 'since']);
  });
});

/** Reading the events of a test server. */
import { expect } from 'vitest';
import { json, type TestServer } from '../harness.js';

export async function eventPage(server: TestServer, query = '', apiKey?: string) {
  const res = await server.call('GET', `/v1/events${query}`, { key: apiKey });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body as { entries: any[]; nextCursor: string; hasMore: boolean };
}

export async function eventTypes(server: TestServer, query = '?since=1d'): Promise<string[]> {
  return (await eventPage(server, query)).entries.map((event) => event.type);
}

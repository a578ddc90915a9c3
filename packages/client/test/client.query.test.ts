/**
 * Every query parameter of every operation of the committed OpenAPI document can be sent: each
 * call below sets every option it has, a fetch of the test's own keeps the query strings, and
 * the names that arrived are compared with the operation's parameters.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NodeClient, Warren } from '../src/index.js';

interface Operation {
  operationId: string;
  parameters?: { name: string; in: string }[];
}
const document = JSON.parse(readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};
const takesQuery = Object.values(document.paths)
  .flatMap((methods) => Object.values(methods))
  .map((op) => [op.operationId, (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name)] as const)
  .filter(([, names]) => names.length > 0);

const held = { self: {} as never, peers: [], version: 1 };
// Calls that set every option; options that exclude each other (a cursor replaces since) take two.
const CALLS: Record<string, (warren: Warren, node: NodeClient) => Promise<unknown>[]> = {
  listDevices: (w) => [
    w.devices.list({ user: 'u', tag: ['tag:a'], online: true, fields: 'all' }),
    w.devices.page({ user: 'u', tag: 'tag:a', online: false, fields: 'all', q: 'web', limit: 5, cursor: 'c' }),
  ],
  listUsers: (w) => [w.users.list({ role: 'admin' })],
  listKeys: (w) => [w.keys.list({ type: 'api', state: 'valid' })],
  listRoutes: (w) => [w.routes.list({ state: 'pending', device: 'd' })],
  listConnectionLog: (w) => [
    w.logs.connections({ since: '1h', limit: 5, device: 'd' }),
    w.logs.connections({ cursor: 'c' }),
  ],
  listAuditLog: (w) => [
    w.logs.audit({ since: '1h', limit: 5, key: 'k', changes: 'true' }),
    w.logs.audit({ cursor: 'c' }),
  ],
  listEvents: (w) => [w.events.list({ since: '1h', limit: 5, type: ['device.*'] }), w.events.list({ cursor: 'c' })],
  listWebhookDeliveries: (w) => [w.webhooks.deliveries('whk_1', { cursor: 'c', limit: 5, state: 'failed' })],
  getNetmap: (_, node) => [node.followNetmap(held)],
};

describe('Warren client: query parameters', () => {
  it.each(takesQuery)('%s: every parameter can be sent', async (operationId, names) => {
    const call = CALLS[operationId];
    expect(call, `${operationId} takes ${names.join(', ')}: no call here sets them`).toBeDefined();
    const sent = new Set<string>();
    const fetch: typeof globalThis.fetch = async (input) => {
      for (const name of new URL(String(input)).searchParams.keys()) sent.add(name);
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const url = 'http://127.0.0.1:1';
    await Promise.allSettled(
      call!(new Warren({ url, apiKey: 'wrn_api_x', fetch }), new NodeClient({ url, nodeToken: 'wrn_node_x', fetch })),
    );
    expect(names.filter((name) => !sent.has(name))).toEqual([]);
  });
});

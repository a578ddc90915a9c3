import { type Enrolled, enroll, json, startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envOf, warren } from './run.js';

describe('warren routes', () => {
  let server: TestServer;
  let env: Record<string, string>;
  let gw: Enrolled;
  let routeId: string;
  beforeAll(async () => {
    server = await startServer();
    env = envOf(server);
    [gw] = (await enroll(server, ['gw-1'], { advertiseRoutes: ['10.8.0.0/24'] })) as [Enrolled];
    await enroll(server, ['plain']);
    routeId = (await json(await server.call('GET', '/v1/routes'))).routes[0].id;
  });
  afterAll(() => server.close());

  it('lists routes as the API returns them with --json, filtered by state and device name', async () => {
    const api = await json(await server.call('GET', '/v1/routes'));
    const all = await warren(['routes', 'list', '--json'], env);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual(api);
    expect(api.routes).toEqual([expect.objectContaining({ id: routeId, deviceId: gw.id, prefix: '10.8.0.0/24' })]);
    const pending = JSON.parse(
      (await warren(['routes', 'list', '--state', 'pending', '--device', 'gw-1', '--json'], env)).stdout,
    );
    expect(pending.routes.map((r: { id: string }) => r.id)).toEqual([routeId]);
    const none = JSON.parse((await warren(['routes', 'list', '--state', 'approved', '--json'], env)).stdout);
    expect(none).toEqual({ routes: [] });
  });

  it('lists routes in a table', async () => {
    const lines = (await warren(['routes', 'list'], env)).stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(new RegExp(`^${routeId} +10\\.8\\.0\\.0/24 +gw-1 \\(${gw.id}\\) +pending`));
  });

  it('approves and disables a route, printing the route as JSON with --json', async () => {
    const approved = await warren(['routes', 'approve', routeId, '--json'], env);
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ id: routeId, state: 'approved', approvedBy: 'initial' });
    const again = await warren(['routes', 'approve', routeId], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^warren: invalid_state: /);
    const disabled = await warren(['routes', 'disable', routeId], env);
    expect(disabled).toEqual({ code: 0, stdout: `${routeId} 10.8.0.0/24 via gw-1: disabled\n`, stderr: '' });
    const stored = (await json(await server.call('GET', '/v1/routes'))).routes[0];
    expect(stored.state).toBe('disabled');
  });
});

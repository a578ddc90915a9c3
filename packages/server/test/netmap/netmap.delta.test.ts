/**
 * Delta netmaps (`?delta=true` with If-None-Match): only the peers changed or removed since the
 * version the device holds, and applied to the map it holds they give exactly the full map —
 * checked over random sequences of presence, tag, route, policy and membership changes, with
 * the client's own applyNetmapDelta. After every step the maps served from the view patched by
 * the change log also equal those of a view loaded from scratch.
 */
import { applyNetmapDelta, isNetmapDelta } from '@warren/client';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetViews, viewStats } from '../../src/modules/netmap/netmap.cache.js';
import { applyPolicy } from '../acl/helpers.js';
import { createAuthKey, enroll, expectProblem, heartbeat, nodeCall } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { createUser, type Devices, enrollAll } from './helpers.js';

// Everyone sees everyone (the shared class list), or each device its own list.
const MESH = `{
  "tagOwners": { "tag:web": ["autogroup:admin"], "tag:db": ["autogroup:admin"], "tag:gw": ["autogroup:admin"] },
  "acls": [{ "action": "accept", "src": ["*"], "dst": ["*:22,443"] }],
}`;
const SPLIT = `{
  "groups": { "group:eng": ["ana@example.com"] },
  "tagOwners": { "tag:web": ["autogroup:admin"], "tag:db": ["autogroup:admin"], "tag:gw": ["autogroup:admin"] },
  "acls": [
    { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] },
    { "action": "accept", "src": ["group:eng"], "dst": ["tag:web:443", "10.9.0.0/24:*"] },
    { "action": "accept", "src": ["tag:web"], "dst": ["tag:db:5432"] },
  ],
}`;

type Spec = { user?: string; tags?: string[]; advertiseRoutes?: string[] };
const SPEC: Record<'ana-1' | 'ana-2' | 'bo-1' | 'web' | 'db' | 'gw', Spec> = {
  'ana-1': { user: 'ana@example.com' },
  'ana-2': { user: 'ana@example.com' },
  'bo-1': { user: 'bo@example.com' },
  web: { tags: ['tag:web'] },
  db: { tags: ['tag:db'] },
  gw: { tags: ['tag:gw'], advertiseRoutes: ['10.9.0.0/24'] },
};
type Name = keyof typeof SPEC;
const NAMES = Object.keys(SPEC) as Name[];
const TAGGED: Name[] = ['web', 'db', 'gw'];
const TAG_SETS = [['tag:web'], ['tag:db'], ['tag:db', 'tag:web'], ['tag:gw']];

type Command =
  | { kind: 'heartbeat' | 'disconnect' | 'replace'; who: Name }
  | { kind: 'retag'; who: Name; tags: string[] }
  | { kind: 'advertise'; routes: readonly string[] }
  | { kind: 'policy'; text: string }
  | { kind: 'time' };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constantFrom('heartbeat' as const, 'disconnect' as const), who: fc.constantFrom(...NAMES) }),
  fc.record({ kind: fc.constant('replace' as const), who: fc.constantFrom(...NAMES) }),
  fc.record({
    kind: fc.constant('retag' as const),
    who: fc.constantFrom(...TAGGED),
    tags: fc.constantFrom(...TAG_SETS),
  }),
  fc.record({ kind: fc.constant('advertise' as const), routes: fc.constantFrom([], ['10.9.0.0/24']) }),
  fc.record({ kind: fc.constant('policy' as const), text: fc.constantFrom(MESH, SPLIT) }),
  fc.record({ kind: fc.constant('time' as const) }),
);

/** A map as compared: peers by id, self without the volatile lastSeen (outside the version). */
const normal = (map: any) => ({
  version: map.version,
  self: { ...map.self, lastSeen: null },
  peers: [...map.peers].sort((a: any, b: any) => a.id.localeCompare(b.id)),
});

async function fetchMap(server: TestServer, token: string, query = '', ifNoneMatch?: string) {
  const res = await server.call('GET', `/v1/node/netmap${query}`, {
    key: token,
    headers: ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch },
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe('delta netmaps', () => {
  let server: TestServer;
  let d: Devices;
  let gwRoute: string;

  beforeAll(async () => {
    server = await startServer();
    await createUser(server, 'ana@example.com');
    await createUser(server, 'bo@example.com');
    await applyPolicy(server, MESH);
    d = await enrollAll(server, SPEC);
    const { routes } = await json(await server.call('GET', '/v1/routes?device=gw'));
    gwRoute = routes[0].id;
    expect((await server.call('POST', `/v1/routes/${gwRoute}/approve`)).status).toBe(200);
  });
  afterAll(() => server.close());

  it('sends only the peer that changed, and the full map when asked without delta', async () => {
    await applyPolicy(server, MESH);
    for (const name of NAMES) await heartbeat(server, d[name].nodeToken);
    const held = await fetchMap(server, d['ana-1'].nodeToken);
    expect(held.body.peers).toHaveLength(NAMES.length - 1);

    expect((await nodeCall(server, d.db.nodeToken, 'disconnect')).status).toBe(204);
    const delta = await fetchMap(server, d['ana-1'].nodeToken, '?delta=true', `"${held.body.version}"`);
    expect(delta.status).toBe(200);
    expect(delta.body.since).toBe(held.body.version);
    expect(delta.body.version).toBeGreaterThan(held.body.version);
    expect(delta.body.peersChanged.map((p: any) => [p.name, p.online])).toEqual([['db', false]]);
    expect(delta.body.peersRemoved).toEqual([]);
    expect(delta.body.peers).toBeUndefined();
    expect(normal(applyNetmapDelta(held.body, delta.body))).toEqual(
      normal((await fetchMap(server, d['ana-1'].nodeToken)).body),
    );

    // Unchanged since: 304, delta or not. Without the opt-in a conditional fetch is a full map.
    const now = delta.body.version;
    expect((await fetchMap(server, d['ana-1'].nodeToken, '?delta=true', `"${now}"`)).status).toBe(304);
    await heartbeat(server, d.db.nodeToken);
    const full = await fetchMap(server, d['ana-1'].nodeToken, '', `"${now}"`);
    expect(full.body.peers).toHaveLength(NAMES.length - 1);
    expect(full.body.since).toBeUndefined();
  });

  it('answers the full map for a version it never sent, and refuses a malformed opt-in', async () => {
    const full = await fetchMap(server, d['bo-1'].nodeToken, '?delta=true', '"987654"');
    expect(full.status).toBe(200);
    expect(full.body.since).toBeUndefined();
    expect(full.body.peers.length).toBeGreaterThan(0);
    const bare = await fetchMap(server, d['bo-1'].nodeToken, '?delta=true');
    expect(bare.body.peers.length).toBeGreaterThan(0);
    await expectProblem(
      await server.call('GET', '/v1/node/netmap?delta=maybe', { key: d['bo-1'].nodeToken }),
      400,
      'invalid_request',
    );
  });

  it('applied to the map held, gives the full map, whatever changes in between', async () => {
    let deltas = 0;
    const patchesBefore = viewStats.patches;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 6 }), async (commands) => {
        await applyPolicy(server, MESH);
        const held = new Map<Name, any>();
        for (const name of NAMES) held.set(name, (await fetchMap(server, d[name].nodeToken)).body);
        for (const c of commands) {
          await run(c);
          if (c.kind === 'replace') held.set(c.who, (await fetchMap(server, d[c.who].nodeToken)).body);
          for (const name of NAMES) {
            const before = held.get(name);
            const got = await fetchMap(server, d[name].nodeToken, '?delta=true', `"${before.version}"`);
            let next = before;
            if (got.status === 200 && isNetmapDelta(got.body)) {
              deltas++;
              next = applyNetmapDelta(before, got.body);
            } else if (got.status === 200) next = got.body;
            else expect(got.status).toBe(304);
            const full = await fetchMap(server, d[name].nodeToken);
            expect(normal(next), `${name} after ${JSON.stringify(c)}`).toEqual(normal(full.body));
            held.set(name, next);
          }
          // The view these maps came from was patched or loaded; one loaded from scratch must
          // give every device the same map, at the same version (a different view would bump it).
          forgetViews(server.database.storage.db);
          for (const name of NAMES) {
            const fresh = await fetchMap(server, d[name].nodeToken);
            expect(normal(fresh.body), `${name} rebuilt after ${JSON.stringify(c)}`).toEqual(normal(held.get(name)));
          }
        }
      }),
      { numRuns: 12 },
    );
    expect(deltas).toBeGreaterThan(0);
    // Re-tags, route changes and replacements took the incremental path.
    expect(viewStats.patches).toBeGreaterThan(patchesBefore);
  }, 120_000);

  async function run(c: Command): Promise<void> {
    if (c.kind === 'heartbeat') expect((await heartbeat(server, d[c.who].nodeToken)).status).toBe(200);
    else if (c.kind === 'disconnect')
      expect((await nodeCall(server, d[c.who].nodeToken, 'disconnect')).status).toBe(204);
    else if (c.kind === 'time') server.clock.advance(61_000);
    else if (c.kind === 'policy') await applyPolicy(server, c.text);
    else if (c.kind === 'advertise') {
      expect((await heartbeat(server, d.gw.nodeToken, { advertiseRoutes: [...c.routes] })).status).toBe(200);
    } else if (c.kind === 'retag') {
      const res = await server.call('POST', `/v1/devices/${d[c.who].device.id}/tags`, { body: { tags: c.tags } });
      expect(res.status, await res.text()).toBe(200);
    } else {
      expect((await server.call('DELETE', `/v1/devices/${d[c.who].device.id}`)).status).toBe(204);
      const spec = SPEC[c.who];
      const key = await createAuthKey(server, { user: spec.user, tags: spec.tags });
      d[c.who] = await enroll(server, key.key, { hostname: c.who, advertiseRoutes: spec.advertiseRoutes });
      if (c.who === 'gw') {
        const { routes } = await json(await server.call('GET', '/v1/routes?device=gw'));
        expect((await server.call('POST', `/v1/routes/${routes[0].id}/approve`)).status).toBe(200);
      }
    }
  }
});

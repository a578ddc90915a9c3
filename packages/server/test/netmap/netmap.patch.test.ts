/**
 * A view patched by device changes (NetworkView.patched, which derives the peer map by identity
 * class) must serve exactly what a view built from scratch over the same devices serves: every
 * device's peers and their texts, its fingerprint both ways, and the shared list of a device
 * that sees everyone — over random sequences of re-tags, enrollments, deletions, renames,
 * route changes and routers going offline, with a policy that uses tags, users, roles,
 * autogroup:self, addresses, subnet routes and exit nodes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ServedRouteRow } from '../../src/modules/netmap/netmap.repository.js';
import { type Primaries, primariesOf } from '../../src/modules/netmap/netmap-primaries.js';
import { NetworkView } from '../../src/modules/netmap/netmap-view.js';
import { OnlineSet } from '../../src/modules/netmap/online-set.js';
import type { DeviceIdentityRow } from '../../src/modules/netmap/policy-inputs.repository.js';
import type { PresenceSnapshot } from '../../src/modules/netmap/presence-snapshot.js';
import { compilePolicy, type PolicyUser } from '../../src/policy/index.js';

const POLICY = compilePolicy(`{
  "groups": { "group:eng": ["bo@example.com"] },
  "tagOwners": { "tag:web": ["autogroup:admin"], "tag:db": ["autogroup:admin"], "tag:gw": ["autogroup:admin"] },
  "hosts": { "lan": "10.1.0.0/16" },
  "acls": [
    { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] },
    { "action": "accept", "src": ["autogroup:admin"], "dst": ["*:*"] },
    { "action": "accept", "src": ["group:eng"], "dst": ["tag:web:443", "lan:*"] },
    { "action": "accept", "src": ["tag:web"], "dst": ["tag:db:5432"] },
    { "action": "accept", "src": ["tag:gw"], "dst": ["autogroup:internet:*"] },
    { "action": "accept", "src": ["10.1.0.0/16"], "dst": ["tag:db:22"] },
  ],
}`);
const USERS: PolicyUser[] = [
  { login: 'ana@example.com', role: 'admin' },
  { login: 'bo@example.com', role: 'member' },
  { login: 'cy@example.com', role: 'member' },
];
const LOGINS = [null, ...USERS.map((u) => u.login)];
const TAG_SETS = [[], ['tag:web'], ['tag:db'], ['tag:db', 'tag:web'], ['tag:gw'], ['tag:gone']];
const PREFIXES = [[], ['10.1.0.0/24'], ['10.1.1.0/24'], ['0.0.0.0/0', '::/0'], ['10.1.0.0/24', '0.0.0.0/0', '::/0']];

interface Device {
  row: DeviceIdentityRow;
  routes: string[];
  online: boolean;
}

type Op =
  | { kind: 'retag'; at: number; tags: string[] }
  | { kind: 'rename'; at: number }
  | { kind: 'remove'; at: number }
  | { kind: 'enroll'; login: string | null; tags: string[]; routes: string[] }
  | { kind: 'routes'; at: number; routes: string[] }
  | { kind: 'presence'; at: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('retag' as const), at: fc.nat(), tags: fc.constantFrom(...TAG_SETS) }),
  fc.record({ kind: fc.constant('rename' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('enroll' as const),
    login: fc.constantFrom(...LOGINS),
    tags: fc.constantFrom(...TAG_SETS),
    routes: fc.constantFrom(...PREFIXES),
  }),
  fc.record({ kind: fc.constant('routes' as const), at: fc.nat(), routes: fc.constantFrom(...PREFIXES) }),
  fc.record({ kind: fc.constant('presence' as const), at: fc.nat() }),
);

let serial = 0;
function device(login: string | null, tags: string[], routes: string[]): Device {
  serial++;
  const id = `device-${String(serial).padStart(5, '0')}`;
  return {
    row: {
      id,
      name: `d${serial}`,
      tags: JSON.stringify(tags),
      addr_index: serial,
      user_login: tags.length ? null : login,
    },
    routes,
    online: true,
  };
}

/** Devices are approved in slot order: per prefix the first online router is primary, every online exit node. */
function assignment(devices: Device[]): Primaries {
  const rows: ServedRouteRow[] = [];
  const taken = new Set<string>();
  for (const d of devices) {
    for (const prefix of d.routes) {
      const exit = prefix === '0.0.0.0/0' || prefix === '::/0';
      const primary = d.online && (exit || !taken.has(prefix));
      if (primary && !exit) taken.add(prefix);
      rows.push({ id: `${d.row.id}:${prefix}`, device_id: d.row.id, prefix, is_primary: primary ? 1 : 0 });
    }
  }
  return primariesOf(rows);
}

function presenceOf(devices: Device[]): PresenceSnapshot {
  const online = devices.filter((d) => d.online).map((d) => d.row.id);
  return { online: OnlineSet.of(online), digest: online.join(',') };
}

/**
 * The snapshot that follows `before` once the set is `after`, made by difference as
 * presence-snapshot.ts makes it when devices time out or their presence is logged.
 */
function following(before: PresenceSnapshot, after: PresenceSnapshot): PresenceSnapshot {
  const left = [...before.online].filter((id) => !after.online.has(id));
  const joined = [...after.online].filter((id) => !before.online.has(id));
  return {
    online: before.online.changed(left, joined),
    digest: after.digest,
    madeFrom: { snapshot: before, left, joined },
  };
}

/** Everything a view serves, for every device. */
function served(view: NetworkView, devices: Device[], primaries: Primaries, presence: PresenceSnapshot) {
  return devices.map(({ row: { id } }) => ({
    id,
    listed: view.listedPeers(primaries, id, presence),
    everyone: view.everyonePeersJson(primaries, id, presence),
    // The texts a delta is diffed against.
    everyoneTexts: view.everyonePeers(primaries, id, presence)?.list.peers.texts,
    fingerprint: view.fingerprint(primaries, id, presence),
    listedFingerprint: view.fingerprint(primaries, id, presence, 'list'),
  }));
}

/** Applies `o` to `devices`; returns the ids whose rows changed (undefined: only routes or presence). */
function apply(devices: Device[], o: Op): string[] | undefined {
  if (o.kind === 'enroll') {
    const d = device(o.login, o.tags, o.routes);
    devices.push(d);
    return [d.row.id];
  }
  if (devices.length === 0) return [];
  const at = o.at % devices.length;
  const d = devices[at];
  if (o.kind === 'retag') {
    const tags = JSON.stringify(o.tags);
    d.row = { ...d.row, tags, user_login: o.tags.length ? null : d.row.user_login };
    return [d.row.id];
  }
  if (o.kind === 'rename') {
    d.row = { ...d.row, name: `${d.row.name}x` };
    return [d.row.id];
  }
  if (o.kind === 'remove') {
    devices.splice(at, 1);
    return [d.row.id];
  }
  if (o.kind === 'routes') d.routes = o.routes;
  else d.online = !d.online;
  return undefined;
}

describe('patched network views', () => {
  it('serve what a view built from scratch serves, after any sequence of device changes', () => {
    const initial = fc.array(
      fc.record({
        login: fc.constantFrom(...LOGINS),
        tags: fc.constantFrom(...TAG_SETS),
        routes: fc.constantFrom(...PREFIXES),
      }),
      { minLength: 1, maxLength: 12 },
    );
    fc.assert(
      fc.property(initial, fc.array(op, { minLength: 1, maxLength: 8 }), (start, ops) => {
        const devices = start.map((s) => device(s.login, s.tags, s.routes));
        let primaries = assignment(devices);
        let presence = presenceOf(devices);
        let view = new NetworkView(
          '0',
          POLICY,
          devices.map((d) => d.row),
          USERS,
        );
        // Fill every cache the patch carries over.
        served(view, devices, primaries, presence);
        // Patched alike but served only at the end: what it carries piles up across patches.
        let quiet = view;
        for (const [step, o] of ops.entries()) {
          const changed = apply(devices, o);
          if (changed) {
            const ids = new Set(changed);
            const rows = devices.filter((d) => ids.has(d.row.id)).map((d) => d.row);
            view = view.patched(String(step + 1), rows, changed, USERS);
            quiet = quiet.patched(String(step + 1), rows, changed, USERS);
          }
          primaries = assignment(devices);
          // A snapshot is kept while the online set stays the same, as presence-snapshot.ts does,
          // so the lists made for it carry over.
          const now = presenceOf(devices);
          if (now.digest !== presence.digest) presence = following(presence, now);
          const fresh = new NetworkView(
            'fresh',
            POLICY,
            devices.map((d) => d.row),
            USERS,
          );
          expect(served(view, devices, primaries, presence), `after ${JSON.stringify(o)}`).toEqual(
            served(fresh, devices, primaries, presence),
          );
        }
        const fresh = new NetworkView(
          'fresh',
          POLICY,
          devices.map((d) => d.row),
          USERS,
        );
        expect(served(quiet, devices, primaries, presence), 'served once, at the end').toEqual(
          served(fresh, devices, primaries, presence),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('builds the peer map anew once a flapping router has piled up routes', () => {
    const devices = [device('ana@example.com', [], []), device(null, ['tag:gw'], ['10.1.0.0/24'])];
    const view = new NetworkView(
      '0',
      POLICY,
      devices.map((d) => d.row),
      USERS,
    );
    let presence = presenceOf(devices);
    for (let flip = 0; flip < 20_000; flip++) {
      devices[1].online = !devices[1].online;
      presence = presenceOf(devices);
      view.listedPeers(assignment(devices), devices[0].row.id, presence);
    }
    // Each return of the router adds its route to the derived index: past the bound the map
    // is built anew, so it can still be derived from.
    expect(view.peersFor(assignment(devices)).derivable).toBe(true);
    const fresh = new NetworkView(
      'fresh',
      POLICY,
      devices.map((d) => d.row),
      USERS,
    );
    expect(served(view, devices, assignment(devices), presence)).toEqual(
      served(fresh, devices, assignment(devices), presence),
    );
  });
});

// Golden tests: every scenario of captures/ (a policy, the nodes with their users, tags,
// addresses, advertised and approved routes and presence, and each node's peers as Tailscale's
// control plane computes them) replayed through Warren's engine — the policy validated, the
// routes its autoApprovers allow approved as the route hook does, the primaries chosen as the
// netmap does, the peer map built — and compared exactly: the peer set, each peer's allowedIPs,
// and its primary routes. See captures/README.md for the format.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ServedRouteRow } from '../../src/modules/netmap/netmap.repository.js';
import { primariesOf } from '../../src/modules/netmap/netmap-primaries.js';
import {
  autoApproves,
  type CompiledPolicy,
  PeerMap,
  type PolicyDevice,
  type PolicyError,
  type PolicyRole,
  type PolicyUser,
  validatePolicy,
} from '../../src/policy/index.js';

interface CaptureNode {
  Name: string;
  User: string | null;
  Tags: string[];
  Addresses: string[];
  Online: boolean;
  Hostinfo?: { RoutableIPs?: string[] };
  ApprovedRoutes?: string[];
}

interface CapturePeer {
  Name: string;
  AllowedIPs: string[];
  PrimaryRoutes: string[];
}

interface Scenario {
  description: string;
  /** The document, or its text when line and column matter. */
  policy: unknown;
  /** Present when the policy is refused: every error, as validation reports it. */
  errors?: PolicyError[];
  users: Array<{ LoginName: string; Role: PolicyRole }>;
  nodes: CaptureNode[];
  captures: Record<string, { Peers: CapturePeer[] }>;
}

const DIR = join(import.meta.dirname, 'captures');

/**
 * Approved and advertised routes as the routes table holds them: those approved by hand, and
 * those the policy's autoApprovers approve when the device advertises them. File order is
 * approval order, so per prefix the first online router is primary (every online exit node for
 * default routes).
 */
function servedRows(nodes: CaptureNode[], policy: CompiledPolicy, users: PolicyUser[]): ServedRouteRow[] {
  const taken = new Set<string>();
  return nodes.flatMap((n, i) =>
    (n.Hostinfo?.RoutableIPs ?? [])
      .filter(
        (prefix) =>
          n.ApprovedRoutes?.includes(prefix) ||
          autoApproves(policy, prefix, { id: n.Name, user: n.User, tags: n.Tags, addresses: [], routes: [] }, users),
      )
      .map((prefix, j) => {
        const exit = prefix === '0.0.0.0/0' || prefix === '::/0';
        const primary = n.Online && (exit || !taken.has(prefix));
        if (primary && !exit) taken.add(prefix);
        return { id: `rt_${String(i).padStart(3, '0')}_${j}`, device_id: n.Name, prefix, is_primary: primary ? 1 : 0 };
      }),
  );
}

const policyText = (s: Scenario) => (typeof s.policy === 'string' ? s.policy : JSON.stringify(s.policy));

function replay(s: Scenario): Map<string, CapturePeer[]> {
  const result = validatePolicy(policyText(s));
  if (!result.ok) throw new Error(`policy is invalid: ${JSON.stringify(result.errors)}`);
  const users = s.users.map((u) => ({ login: u.LoginName, role: u.Role }));
  const primaries = primariesOf(servedRows(s.nodes, result.policy, users));
  const devices: PolicyDevice[] = s.nodes.map((n) => ({
    id: n.Name,
    user: n.User,
    tags: n.Tags,
    addresses: n.Addresses.map((a) => a.replace(/\/(32|128)$/, '')),
    routes: primaries.served.get(n.Name) ?? [],
    primaryRoutes: primaries.byDevice.get(n.Name) ?? [],
  }));
  const map = new PeerMap(result.policy, devices, users);
  return new Map(
    s.nodes.map((n) => [
      n.Name,
      map.peers(n.Name).map((p) => ({
        Name: p.id,
        AllowedIPs: p.allowedIPs,
        PrimaryRoutes: primaries.byDevice.get(p.id) ?? [],
      })),
    ]),
  );
}

/** Order-free form of a peer list: Tailscale sorts neither peers nor allowedIPs the way we do. */
const canonical = (peers: CapturePeer[]) =>
  peers
    .map((p) => ({ Name: p.Name, AllowedIPs: [...p.AllowedIPs].sort(), PrimaryRoutes: [...p.PrimaryRoutes].sort() }))
    .sort((a, b) => a.Name.localeCompare(b.Name));

const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));

describe('captured scenarios replayed through the engine', () => {
  it('has scenarios for every feature', () => {
    expect(files.length).toBeGreaterThanOrEqual(7);
  });

  for (const file of files) {
    it(file, () => {
      const s = JSON.parse(readFileSync(join(DIR, file), 'utf8')) as Scenario;
      if (s.errors) {
        // Refused: the netmaps stay those of the policy before, so there is nothing to replay.
        expect(validatePolicy(policyText(s)).errors).toEqual(s.errors);
        expect(s.nodes).toEqual([]);
        return;
      }
      // Every node has a capture: the scenario states who sees no one, too.
      expect(Object.keys(s.captures).sort()).toEqual(s.nodes.map((n) => n.Name).sort());
      const got = replay(s);
      for (const [name, capture] of Object.entries(s.captures)) {
        expect(canonical(got.get(name) ?? []), `${file}: peers of ${name}`).toEqual(canonical(capture.Peers));
      }
    });
  }
});

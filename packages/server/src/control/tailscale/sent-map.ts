/**
 * What a map stream keeps of the map it last sent: enough to tell what the next one changes,
 * not the map itself. A stream lives as long as its device is connected, so whatever it keeps
 * is held once per connected device; the texts of a map (its node, every peer's node, the
 * packet filter) are most of a kilobyte each, and peers' texts made in different rounds are
 * different copies. A digest of each stands in for it: the delta compares digests and writes
 * the new map's texts, which the build that made them still holds.
 */
import type { MapState } from './map-state.js';
import { digestOf } from './text-digest.js';

export { digestOf };

export interface SentMap {
  /** Digests of the node's text, the packet filter's, the SSH policy's, the DNS config's and the DERP map's. */
  node: string;
  packetFilter: string;
  sshPolicy: string;
  dns: string;
  derp: string;
  /** Peer numeric id → digest of its node text. */
  peers: Map<number, string>;
  /** User profile id → digest of the profile's JSON. */
  userProfiles: Map<number, string>;
  domain: string;
  flowLogDomain: string;
  /** Digest of the map's shape (map-state.ts mapShape): whether a policy change can send its filter alone. */
  shape: string;
  /** When the device's login expires by the clock (null: never): a filter alone is sent only before. */
  loginExpiresAt: number | null;
}

export function sentMap(state: MapState): SentMap {
  const peers = new Map<number, string>();
  for (const [id, peer] of state.peers) peers.set(id, peer.digest);
  const userProfiles = new Map<number, string>();
  for (const [id, profile] of state.userProfiles) userProfiles.set(id, profile.digest);
  // The node and the filter are this device's own; the rest comes with its digest, made once.
  return {
    node: digestOf(state.node),
    packetFilter: digestOf(state.packetFilter),
    sshPolicy: digestOf(state.sshPolicy),
    dns: state.dns.digest,
    derp: state.derp.digest,
    peers,
    userProfiles,
    domain: state.domain,
    flowLogDomain: state.flowLogDomain,
    shape: state.shape,
    loginExpiresAt: state.loginExpiresAt,
  };
}

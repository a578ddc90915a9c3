/**
 * What a map stream keeps of the map it last sent: enough to tell what the next one changes,
 * not the map itself. A stream lives as long as its device is connected, so whatever it keeps
 * is held once per connected device; the texts of a map (its node, every peer's node, the
 * packet filter) are most of a kilobyte each, and peers' texts made in different rounds are
 * different copies. A digest of each stands in for it: the delta compares digests and writes
 * the new map's texts, which the build that made them still holds.
 */
import { createHash } from 'node:crypto';
import type { MapState } from './map-state.js';

/** Bytes of SHA-256 kept: 128 bits, so two different texts never pass for the same. */
const DIGEST_BYTES = 16;

/** A text's digest, as a 16-character one-byte string (32 bytes of heap where the text was). */
export function digestOf(text: string): string {
  return createHash('sha256').update(text).digest().toString('latin1', 0, DIGEST_BYTES);
}

export interface SentMap {
  /** Digests of the node's text, the packet filter's, the DNS config's and the DERP map's. */
  node: string;
  packetFilter: string;
  dns: string;
  derp: string;
  /** Peer numeric id → digest of its node text. */
  peers: Map<number, string>;
  /** User profile id → digest of the profile's JSON. */
  userProfiles: Map<number, string>;
  domain: string;
  flowLogDomain: string;
}

export function sentMap(state: MapState): SentMap {
  const peers = new Map<number, string>();
  for (const [id, peer] of state.peers) peers.set(id, peer.digest);
  const userProfiles = new Map<number, string>();
  for (const [id, profile] of state.userProfiles) userProfiles.set(id, digestOf(JSON.stringify(profile)));
  return {
    node: digestOf(state.node),
    packetFilter: digestOf(state.packetFilter),
    dns: digestOf(state.dns),
    derp: digestOf(state.derp),
    peers,
    userProfiles,
    domain: state.domain,
    flowLogDomain: state.flowLogDomain,
  };
}

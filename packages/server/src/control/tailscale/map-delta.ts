/**
 * tailcfg.MapResponse bodies: the first of a session is full; each later one carries only what
 * changed since the state last sent — the node itself, peers changed or added (PeersChanged,
 * whole nodes, online flips included), peers gone (PeersRemoved), the packet filter, user
 * profiles, DNS, the DERP map and the network's flow log id — or nothing at all when nothing
 * changed.
 */
import type { MapState } from './map-state.js';
import type { SentMap } from './sent-map.js';

export function fullResponse(state: MapState, seq: number, now: Date): string {
  return (
    `{"Seq":${seq},"Node":${state.node},"DERPMap":${state.derp},"Peers":[${[...state.peers.values()].map((p) => p.text).join(',')}],` +
    `"DNSConfig":${state.dns},"Domain":${JSON.stringify(state.domain)},"CollectServices":false,` +
    `"PacketFilter":${state.packetFilter},"UserProfiles":${JSON.stringify([...state.userProfiles.values()])},` +
    `${state.flowLogDomain ? `"DomainDataPlaneAuditLogID":${JSON.stringify(state.flowLogDomain)},` : ''}` +
    `"ControlTime":${JSON.stringify(now.toISOString())}}`
  );
}

/**
 * The delta from the map sent (`before`) to `after`, whose texts `map` holds, or undefined
 * when they are the same.
 */
export function deltaResponse(before: SentMap, after: SentMap, map: MapState, seq: number): string | undefined {
  const parts: string[] = [];
  if (after.node !== before.node) parts.push(`"Node":${map.node}`);
  const changed: string[] = [];
  for (const [id, peer] of map.peers) if (before.peers.get(id) !== peer.digest) changed.push(peer.text);
  const removed: number[] = [];
  for (const id of before.peers.keys()) if (!after.peers.has(id)) removed.push(id);
  if (changed.length > 0) parts.push(`"PeersChanged":[${changed.join(',')}]`);
  if (removed.length > 0) parts.push(`"PeersRemoved":${JSON.stringify(removed)}`);
  if (after.packetFilter !== before.packetFilter) parts.push(`"PacketFilter":${map.packetFilter}`);
  const newProfiles = [...map.userProfiles.values()].filter(
    (p) => before.userProfiles.get(p.ID) !== after.userProfiles.get(p.ID),
  );
  if (newProfiles.length > 0) parts.push(`"UserProfiles":${JSON.stringify(newProfiles)}`);
  if (after.dns !== before.dns) parts.push(`"DNSConfig":${map.dns}`);
  if (after.derp !== before.derp) parts.push(`"DERPMap":${map.derp}`);
  if (after.domain !== before.domain) parts.push(`"Domain":${JSON.stringify(after.domain)}`);
  // Turning flow logs off takes the capability off the node; the client keeps the old id unused.
  if (after.flowLogDomain && after.flowLogDomain !== before.flowLogDomain) {
    parts.push(`"DomainDataPlaneAuditLogID":${JSON.stringify(after.flowLogDomain)}`);
  }
  if (parts.length === 0) return undefined;
  return `{"Seq":${seq},${parts.join(',')}}`;
}

export const KEEP_ALIVE = '{"KeepAlive":true}';

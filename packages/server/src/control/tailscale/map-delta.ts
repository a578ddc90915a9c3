/**
 * tailcfg.MapResponse bodies: the first of a session is full; each later one carries only what
 * changed since the state last sent — the node itself, peers changed or added (PeersChanged,
 * whole nodes, online flips included), peers gone (PeersRemoved), the packet filter, the SSH policy, user
 * profiles, DNS, the DERP map and the network's flow log id — or nothing at all when nothing
 * changed.
 */
import type { MapState } from './map-state.js';
import type { SentMap } from './sent-map.js';
import type { SentText } from './text-digest.js';

export function fullResponse(state: MapState, seq: number, now: Date): string {
  return (
    `{"Seq":${seq},"Node":${state.node},"DERPMap":${state.derp.text},"Peers":[${texts(state.peers.values())}],` +
    `"DNSConfig":${state.dns.text},"Domain":${JSON.stringify(state.domain)},"CollectServices":false,` +
    `"PacketFilter":${state.packetFilter},"SSHPolicy":${state.sshPolicy},"UserProfiles":[${texts(state.userProfiles.values())}],` +
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
  // The client keeps the last SSHPolicy it was sent: an empty one takes every rule away.
  if (after.sshPolicy !== before.sshPolicy) parts.push(`"SSHPolicy":${map.sshPolicy}`);
  const newProfiles: string[] = [];
  for (const [id, profile] of map.userProfiles)
    if (before.userProfiles.get(id) !== profile.digest) newProfiles.push(profile.text);
  if (newProfiles.length > 0) parts.push(`"UserProfiles":[${newProfiles.join(',')}]`);
  if (after.dns !== before.dns) parts.push(`"DNSConfig":${map.dns.text}`);
  if (after.derp !== before.derp) parts.push(`"DERPMap":${map.derp.text}`);
  // The Domain goes with new profiles as well: tailscaled (v1.102.5) applies a delta of peers
  // and profiles alone in place, keeping the profiles for whois but not in the netmap that
  // `tailscale status` reads, which then shows a new user's device as `userid:…` until its next
  // full map. A Domain is a field it cannot apply in place, so it rebuilds the netmap from all
  // it holds, profiles included: a few bytes, and only when a user is new to the device's map
  // or changed.
  if (after.domain !== before.domain || newProfiles.length > 0) parts.push(`"Domain":${JSON.stringify(after.domain)}`);
  // Turning flow logs off takes the capability off the node; the client keeps the old id unused.
  if (after.flowLogDomain && after.flowLogDomain !== before.flowLogDomain) {
    parts.push(`"DomainDataPlaneAuditLogID":${JSON.stringify(after.flowLogDomain)}`);
  }
  if (parts.length === 0) return undefined;
  return `{"Seq":${seq},${parts.join(',')}}`;
}

function texts(of: Iterable<SentText>): string {
  let out = '';
  for (const { text } of of) out += out === '' ? text : `,${text}`;
  return out;
}

/**
 * The delta of a change that could alter only the packet filter and the SSH policy, or
 * undefined when it altered neither.
 */
export function filterDelta(
  before: SentMap,
  after: Pick<SentMap, 'packetFilter' | 'sshPolicy'>,
  update: { packetFilter: string; sshPolicy: string },
  seq: number,
): string | undefined {
  const parts: string[] = [];
  if (after.packetFilter !== before.packetFilter) parts.push(`"PacketFilter":${update.packetFilter}`);
  if (after.sshPolicy !== before.sshPolicy) parts.push(`"SSHPolicy":${update.sshPolicy}`);
  return parts.length === 0 ? undefined : `{"Seq":${seq},${parts.join(',')}}`;
}

export const KEEP_ALIVE = '{"KeepAlive":true}';

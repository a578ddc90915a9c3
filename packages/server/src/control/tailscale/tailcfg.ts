/**
 * Warren's devices and users as Tailscale's tailcfg types: the one place that decides how a
 * device looks to a Tailscale client. Tailscale names nodes and users by 64-bit integers;
 * Warren's ids are text, so each is mapped to a stable integer (53 bits of its SHA-256, safe
 * in a JavaScript number and in Go's int64), the same on every instance and across restarts.
 */
import { createHash } from 'node:crypto';
import { parseList } from '../../lib/json.js';
import { addressesOf } from '../../modules/devices/addresses.js';
import { loginExpired } from '../../modules/devices/standing.js';
import { isExitRoute } from '../../modules/routes/routes.presenter.js';
import type { NodeRow } from './tailscale.repository.js';

/** Tailscale's zero time, which its clients read as "never". */
const ZERO_TIME = '0001-01-01T00:00:00Z';
const ZERO_KEY = '0'.repeat(64);
/** The node capability that turns a client's network flow logging on (with the two log ids). */
export const CAP_FLOW_LOGS = 'https://tailscale.com/cap/data-plane-audit-logs';
/**
 * The node capability that turns Taildrop on in the client (`tailscale file cp`, the apps'
 * share sheet): without it the client refuses to send and to receive. Who may send to whom is
 * the client's rule (docs/TAILSCALE.md, *Taildrop*): a user's own untagged devices.
 */
export const CAP_FILE_SHARING = 'https://tailscale.com/cap/file-sharing';
/**
 * Node capabilities of a device's own node that let its Tailscale SSH server run
 * (`tailscale up --ssh` refuses without the first once it has a map) and apply the variables
 * an ssh rule's acceptEnv lets a client send. Which connections it accepts is the map's
 * SSHPolicy alone, so every device may run the server, as in Tailscale.
 */
export const CAP_SSH = 'https://tailscale.com/cap/ssh';
export const CAP_SSH_ENV_VARS = 'ssh-env-vars';
/** The node attribute of an exit node that the client may suggest or pick for auto:any. */
export const CAP_SUGGEST_EXIT_NODE = 'suggest-exit-node';
/** The user tagged devices belong to, as in Tailscale. */
export const TAGGED_USER = { ID: 2147455555, LoginName: 'tagged-devices', DisplayName: 'Tagged Devices' };

/** Ids worked out so far; past this many the memo starts over (a few hundred kB at most). */
const MAX_NUMERIC_IDS = 65_536;
const numericIds = new Map<string, number>();

/**
 * A device's or user's numeric id as the client knows it, from a hash of its id. Every map
 * names each of its peers and their users by it, so a policy change asked for it peers ×
 * streams times: each id is hashed once and kept.
 */
export function numericId(text: string): number {
  let id = numericIds.get(text);
  if (id === undefined) {
    id = createHash('sha256').update(text).digest().readUIntBE(0, 6) % 2 ** 53 || 1;
    if (numericIds.size >= MAX_NUMERIC_IDS) numericIds.clear();
    numericIds.set(text, id);
  }
  return id;
}

export interface UserProfile {
  ID: number;
  LoginName: string;
  DisplayName: string;
  ProfilePicURL: string;
}

export function userProfile(row: Pick<NodeRow, 'user_id' | 'user_login' | 'user_display' | 'tags'>): UserProfile {
  if (parseList(row.tags).length > 0 || !row.user_id) return { ...TAGGED_USER, ProfilePicURL: '' };
  const login = row.user_login ?? row.user_id;
  return { ID: numericId(row.user_id), LoginName: login, DisplayName: row.user_display || login, ProfilePicURL: '' };
}

/** An address as a host prefix (`100.64.0.1/32`, `fd7a:…/128`). */
export const hostPrefix = (address: string): string =>
  address.includes('/') ? address : `${address}/${address.includes(':') ? 128 : 32}`;

const iso = (ms: number | null): string => (ms === null ? ZERO_TIME : new Date(ms).toISOString());

function hostinfoOf(row: NodeRow): Record<string, unknown> {
  let stored: Record<string, unknown> = {};
  if (row.hostinfo) {
    try {
      stored = JSON.parse(row.hostinfo) as Record<string, unknown>;
    } catch {
      stored = {};
    }
  }
  return { ...stored, Hostname: row.hostname, OS: (stored.OS as string | undefined) ?? row.os };
}

export interface NodeView {
  /** The peer's allowedIPs as this viewer's netmap gives them (self: its addresses). */
  allowedIPs: readonly string[];
  /** Approved routes it serves as primary (exit routes among them are left out of PrimaryRoutes). */
  primaryRoutes: readonly string[];
  online: boolean;
  /** The device's own node (in its own map), which alone carries node capabilities. */
  own?: boolean;
  /** The device's private flow log id: set in its own node only, when its network logs flows. */
  flowLogId?: string;
}

/**
 * The capabilities of a device's own node: file sharing and Tailscale SSH always, as Tailscale
 * and Headscale (`taildrop.enabled`, on by default) give them; flow logging while the network
 * logs flows.
 * A peer's node carries one only when it is an exit node this viewer may use (both default
 * routes in the AllowedIPs it is given): `suggest-exit-node`, which makes it a recommended exit
 * node, as Tailscale recommends every exit node of a tailnet. The client suggests (`tailscale
 * exit-node suggest`) and `--exit-node=auto:any` picks only among peers that carry it, and
 * without one auto:any blackholes internet traffic. Being derived from the AllowedIPs, it keeps
 * a peer's text the same for every viewer that sees the peer the same way.
 */
function capMapOf(view: NodeView): Record<string, []> | undefined {
  if (!view.own) {
    const exitNode = view.allowedIPs.includes('0.0.0.0/0') && view.allowedIPs.includes('::/0');
    return exitNode ? { [CAP_SUGGEST_EXIT_NODE]: [] } : undefined;
  }
  return {
    [CAP_FILE_SHARING]: [],
    [CAP_SSH]: [],
    [CAP_SSH_ENV_VARS]: [],
    ...(view.flowLogId && { [CAP_FLOW_LOGS]: [] }),
  };
}

/** A device as tailcfg.Node, named `<name>.<domain>.` (MagicDNS). */
export function tailcfgNode(row: NodeRow, view: NodeView, domain: string, now: number): Record<string, unknown> {
  const tags = parseList(row.tags);
  const addresses = addressesOf(Number(row.addr_index)).map(hostPrefix);
  const endpoints = row.endpoints ? row.endpoints.split(',') : [];
  const capMap = capMapOf(view);
  return {
    ID: numericId(row.id),
    StableID: row.id,
    Name: `${row.name}.${domain}.`,
    User: userProfile(row).ID,
    Key: row.node_key,
    // Zero is "never": the client renews nothing and its peers never drop it.
    KeyExpiry: row.key_expiry_disabled !== 0 ? ZERO_TIME : iso(row.expires_at),
    ...(loginExpired(row, now) && { Expired: true }),
    Machine: row.machine_key ?? `mkey:${ZERO_KEY}`,
    DiscoKey: row.disco_key ?? `discokey:${ZERO_KEY}`,
    Addresses: addresses,
    AllowedIPs: view.allowedIPs.map(hostPrefix),
    Endpoints: endpoints,
    HomeDERP: row.home_derp,
    Hostinfo: hostinfoOf(row),
    Created: iso(row.created_at),
    Tags: tags,
    // Subnet routes only, as Tailscale's control and Headscale send them: the client takes any
    // route here for one that --accept-routes would install, and warns every peer without it
    // ("Some peers are advertising routes") when an exit node is merely on offer.
    PrimaryRoutes: view.primaryRoutes.filter((prefix) => !isExitRoute(prefix)),
    LastSeen: iso(row.last_seen_at),
    Online: view.online,
    // false: the client waits for approval (NeedsMachineAuth) and is given no peers.
    MachineAuthorized: row.authorized !== 0,
    ComputedName: row.name,
    ComputedNameWithHost: row.name,
    ...(capMap && { CapMap: capMap }),
    ...(view.flowLogId && { DataPlaneAuditLogID: view.flowLogId }),
  };
}

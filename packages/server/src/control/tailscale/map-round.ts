/**
 * What the map streams of a network share for one network view (one netmap epoch and policy,
 * netmap.cache.ts): the network's map settings, the device rows maps are made of, and each
 * peer's tailcfg node as JSON text. Every change that alters any of them moves the netmap
 * epoch and so makes a new view, and with it a new round; a change that moves nothing (a
 * heartbeat's LastSeen, a Hostinfo detail) is seen by the next round, as before.
 *
 * A policy change rebuilds every stream's map: each read its peers' rows, the network's row
 * and made every peer's node itself, so a fleet cost rows × streams. Shared, a row is read
 * once per round (rows wanted in the same turn of the event loop are read together) and a
 * node seen alike by many viewers (no route of it visible to one and not the other) is made
 * and stringified once, then sent as the same text by every stream.
 */
import type { AppContext } from '../../core/context.js';
import { innerMap } from '../../lib/nested-maps.js';
import type { NetworkView } from '../../modules/netmap/netmap-view.js';
import type { DerpSettings } from '../../modules/network/dns-derp-settings.js';
import { dnsConfig } from './dns.js';
import { type UserProfile, userProfile } from './tailcfg.js';
import { mapNetwork, type NodeRow, nodesByIds } from './tailscale.repository.js';
import { type SentText, sentText } from './text-digest.js';

/** The network's part of every map, as the texts a map is written with and their digests. */
export interface MapNetwork {
  flowLogs: boolean;
  domain: string;
  dns: SentText;
  derp: SentText;
}

/** A user profile as sent (its JSON and digest), and its id. */
export interface ProfileText extends SentText {
  id: UserProfile['ID'];
}

/** Rows read by one query at most (bound parameters stay well under SQLite's limit). */
const ROWS_PER_READ = 500;

/** Device rows read by rounds in this process (for figures, and tests that a filter alone reads none). */
export const roundRowReads = { rows: 0 };

export class MapRound {
  private network: Promise<MapNetwork> | undefined;
  private readonly rows = new Map<string, Promise<NodeRow | undefined>>();
  /** Rows wanted since the last read, read together on the next turn of the event loop. */
  private wanted = new Map<string, { resolve: (row: NodeRow | undefined) => void; reject: (e: unknown) => void }>();
  private readonly nodes = new Map<string, SentText>();
  /** By device id: the profile its row shows (its user's, or the tagged-devices one). */
  private readonly profiles = new Map<string, ProfileText>();

  constructor(
    private readonly ctx: AppContext,
    private readonly networkId: string,
    private readonly derpMap: (settings: DerpSettings) => unknown,
  ) {}

  mapNetwork(): Promise<MapNetwork> {
    if (!this.network) {
      const network = mapNetwork(this.ctx.db, this.networkId).then((n) => ({
        flowLogs: n.flowLogs,
        domain: n.dns.domain,
        dns: sentText(JSON.stringify(dnsConfig(n.dns))),
        derp: sentText(JSON.stringify(this.derpMap(n.derp))),
      }));
      // A failed read is tried again by the next stream rather than kept.
      network.catch(() => {
        if (this.network === network) this.network = undefined;
      });
      this.network = network;
    }
    return this.network;
  }

  /** The rows of `ids` that exist, in no particular order. */
  async nodeRows(ids: readonly string[]): Promise<NodeRow[]> {
    const first = this.wanted.size === 0;
    for (const id of ids) {
      if (this.rows.has(id)) continue;
      const row = new Promise<NodeRow | undefined>((resolve, reject) => this.wanted.set(id, { resolve, reject }));
      row.catch(() => {
        if (this.rows.get(id) === row) this.rows.delete(id);
      });
      this.rows.set(id, row);
    }
    if (first && this.wanted.size > 0) setImmediate(() => this.readWanted());
    const rows = await Promise.all(ids.map((id) => this.rows.get(id)));
    return rows.filter((row): row is NodeRow => row !== undefined);
  }

  /**
   * The node text of `key` (what the text depends on besides the row) and its digest, made once
   * per round.
   */
  nodeText(key: string, make: () => string): SentText {
    let node = this.nodes.get(key);
    if (node === undefined) {
      node = sentText(make());
      this.nodes.set(key, node);
    }
    return node;
  }

  /**
   * The user profile `row` shows, made once per round and row: a stream's map holds the
   * profile of every peer, and a policy change rebuilds every stream's map.
   */
  profileText(row: NodeRow): ProfileText {
    let profile = this.profiles.get(row.id);
    if (profile === undefined) {
      const shown = userProfile(row);
      profile = { id: shown.ID, ...sentText(JSON.stringify(shown)) };
      this.profiles.set(row.id, profile);
    }
    return profile;
  }

  private readWanted(): void {
    const wanted = this.wanted;
    this.wanted = new Map();
    const ids = [...wanted.keys()];
    for (let at = 0; at < ids.length; at += ROWS_PER_READ) {
      const chunk = ids.slice(at, at + ROWS_PER_READ);
      roundRowReads.rows += chunk.length;
      nodesByIds(this.ctx.db, this.networkId, chunk).then(
        (rows) => {
          const byId = new Map(rows.map((row) => [row.id, row]));
          for (const id of chunk) wanted.get(id)!.resolve(byId.get(id));
        },
        (error) => {
          for (const id of chunk) wanted.get(id)!.reject(error);
        },
      );
    }
  }
}

/** What a round is made for: the protocol handler's context and where its relay map comes from. */
export interface RoundOwner {
  ctx: AppContext;
  derpMap: (settings: DerpSettings) => unknown;
}

/** Per view, the round of each protocol handler (instances in one process keep their own). */
const rounds = new WeakMap<NetworkView, WeakMap<object, MapRound>>();

/**
 * The round of `view` for the protocol handler `owner` (whose relay map it uses), shared by
 * every stream whose map is built from that view; a device outside netmaps (no view) gets a
 * round of its own.
 */
export function mapRound(owner: RoundOwner, networkId: string, view: NetworkView | undefined): MapRound {
  const make = () => new MapRound(owner.ctx, networkId, owner.derpMap);
  if (!view) return make();
  const held = innerMap(rounds, view, WeakMap);
  let round = held.get(owner);
  if (!round) {
    round = make();
    held.set(owner, round);
  }
  return round;
}

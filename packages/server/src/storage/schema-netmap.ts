/**
 * Table types of the netmap and presence change logs (migrations 008 and 014), merged into
 * `Database` by declaration merging, as schema-events.ts does for the outbox.
 */

/** One device a move of the network's netmap epoch was about. */
export interface NetmapChangesTable {
  network_id: string;
  /** The epoch the change moved the network to. */
  epoch: number;
  device_id: string;
}

/** One device a move of the network's presence epoch was about. */
export interface PresenceChangesTable {
  network_id: string;
  /** The presence epoch the change moved the network to. */
  epoch: number;
  device_id: string;
}

declare module './schema.js' {
  interface Database {
    netmap_changes: NetmapChangesTable;
    presence_changes: PresenceChangesTable;
  }
}

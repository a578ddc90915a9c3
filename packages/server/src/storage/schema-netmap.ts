/**
 * Table type of the netmap change log (migration 008), merged into `Database` by declaration
 * merging, as schema-events.ts does for the outbox.
 */

/** One device a move of the network's netmap epoch was about. */
export interface NetmapChangesTable {
  network_id: string;
  /** The epoch the change moved the network to. */
  epoch: number;
  device_id: string;
}

declare module './schema.js' {
  interface Database {
    netmap_changes: NetmapChangesTable;
  }
}

/**
 * What a server keeps between device list calls, one per application context so that every
 * caller shares it: `/v1/devices` in its forms and `/api/v2`'s device list read the same kept
 * records and bodies (device-records.ts, list-bodies.ts); on SQLite also the index of what
 * lists filter by (device-index.ts).
 */
import type { AppContext } from '../../core/context.js';
import { isPostgres } from '../../storage/database.js';
import { DeviceIndex } from './device-index.js';
import { DeviceRecords } from './device-records.js';
import { ListBodies } from './list-bodies.js';

export interface KeptLists {
  records: DeviceRecords;
  bodies: ListBodies;
  /** SQLite only: what lists filter by, read per call only as far as it changed. */
  index?: DeviceIndex;
}

const kept = new WeakMap<AppContext, KeptLists>();

export function keptLists(ctx: AppContext): KeptLists {
  let lists = kept.get(ctx);
  if (!lists) {
    lists = {
      records: new DeviceRecords(),
      bodies: new ListBodies(),
      index: isPostgres(ctx.db) ? undefined : new DeviceIndex(),
    };
    kept.set(ctx, lists);
  }
  return lists;
}

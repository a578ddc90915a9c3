/**
 * What a server keeps between device list calls, one per application context so that every
 * caller shares it: `/v1/devices` in its forms and `/api/v2`'s device list read the same kept
 * records. Records on every dialect; on SQLite also the index of what lists filter by and the
 * bodies the lists answered with (device-index.ts, list-bodies.ts).
 */
import type { AppContext } from '../../core/context.js';
import { isPostgres } from '../../storage/database.js';
import { DeviceIndex } from './device-index.js';
import { DeviceRecords } from './device-records.js';
import { ListBodies } from './list-bodies.js';

export interface KeptLists {
  records: DeviceRecords;
  index?: { devices: DeviceIndex; bodies: ListBodies };
}

const kept = new WeakMap<AppContext, KeptLists>();

export function keptLists(ctx: AppContext): KeptLists {
  let lists = kept.get(ctx);
  if (!lists) {
    lists = {
      records: new DeviceRecords(),
      index: isPostgres(ctx.db) ? undefined : { devices: new DeviceIndex(), bodies: new ListBodies() },
    };
    kept.set(ctx, lists);
  }
  return lists;
}

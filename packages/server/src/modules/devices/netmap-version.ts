/**
 * Each device's netmap version: the hash of the netmap it was last served, settled on its row
 * so that every instance hands out the same version for the same netmap (modules/netmap works
 * out the hash; the row is this folder's).
 */
import type { Db } from '../../storage/database.js';

/**
 * Stores a device's view hash, bumping its version when the hash changed — a compare-and-set on
 * the version and hash read before, so two requests computing the same new view bump once.
 * The first hash of a device (null before) is stored without a bump: nobody has seen a version.
 * Returns the version that goes with `hash`, or undefined when the device is gone.
 */
export async function settleVersion(
  db: Db,
  deviceId: string,
  seen: { netmap_version: number; netmap_hash: string | null },
  hash: string,
): Promise<number | undefined> {
  let current = seen;
  for (let attempt = 0; attempt < 8; attempt++) {
    if (current.netmap_hash === hash) return Number(current.netmap_version);
    const next = current.netmap_hash === null ? Number(current.netmap_version) : Number(current.netmap_version) + 1;
    const result = await db
      .updateTable('devices')
      .set({ netmap_hash: hash, netmap_version: next })
      .where('id', '=', deviceId)
      .where('netmap_version', '=', current.netmap_version)
      .where('netmap_hash', current.netmap_hash === null ? 'is' : '=', current.netmap_hash)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) return next;
    const row = await db
      .selectFrom('devices')
      .select(['netmap_version', 'netmap_hash'])
      .where('id', '=', deviceId)
      .executeTakeFirst();
    if (!row) return undefined;
    current = row;
  }
  // Others keep changing it: their answer stands, ours is as current as theirs.
  return Number(current.netmap_version);
}

/** SQL of users. Device counts and last-seen are columns of the user's row, kept by triggers. */
import type { Insertable } from 'kysely';
import { compiledQuery, compiledShapes, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import type { UsersTable } from '../../storage/schema.js';

/**
 * A network's users with what they show of their devices: the count and the last sighting are
 * kept in the user's row by triggers (migration 026), so a list reads no device.
 */
function usersWithDevices(db: Db, networkId: string) {
  return db
    .selectFrom('users')
    .select([
      'users.id',
      'users.login_name',
      'users.display_name',
      'users.role',
      'users.status',
      'users.created_at',
      'users.last_seen_at',
      'users.device_count',
      'users.devices_seen_at',
    ])
    .where('users.network_id', '=', networkId);
}

export type UserRow = Awaited<ReturnType<typeof findUser>> & {};

/** The user list query, unexecuted (a test holds its plan). */
export function listUsersQuery(db: Db, networkId: string, role?: string) {
  let query = usersWithDevices(db, networkId);
  if (role) query = query.where('users.role', '=', role);
  return query.orderBy('users.created_at').orderBy('users.id');
}

/**
 * The user list, built once with and once without a role (storage/compiled-query.ts). Users
 * move their network's read stamp (migration 033), so on PostgreSQL a call bringing the stamp
 * is answered from what was kept at it.
 */
const usersOf = compiledShapes(
  (role: boolean) => (role ? 'role' : 'all'),
  (role) => (db, p: Record<string, string>) => listUsersQuery(db, p.networkId as string, role ? p.role : undefined),
  { stampedBy: 'networkId' },
);

export async function listUsers(db: Db, networkId: string, role?: string, stamp?: ReadStamp) {
  return role ? usersOf(true)(db, { networkId, role }, stamp) : usersOf(false)(db, { networkId }, stamp);
}

const userById = compiledQuery(
  (db, p: { networkId: string; id: string }) => usersWithDevices(db, p.networkId).where('users.id', '=', p.id),
  { stampedBy: 'networkId' },
);

/** One user of the network with what they show of their devices (built once). */
export async function findUser(db: Db, networkId: string, id: string, stamp?: ReadStamp) {
  return (await userById(db, { networkId, id }, stamp))[0];
}

/**
 * A user by id or login name (auth keys and device filters accept either). Login names are
 * stored in lower case, so one is found however it is capitalised, as at creation, where
 * `Ana@Example.com` is the user `ana@example.com`.
 */
export async function findUserId(db: Db, networkId: string, idOrLogin: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('network_id', '=', networkId)
    .where((eb) => eb.or([eb('id', '=', idOrLogin), eb('login_name', '=', idOrLogin.toLowerCase())]))
    .executeTakeFirst();
  return row?.id;
}

export async function countUsers(db: Db, networkId: string, role?: string): Promise<number> {
  let query = db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('network_id', '=', networkId);
  if (role) query = query.where('role', '=', role);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertUser(trx: Db, row: Insertable<UsersTable>): Promise<void> {
  await trx.insertInto('users').values(row).execute();
}

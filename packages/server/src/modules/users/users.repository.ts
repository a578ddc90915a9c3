/** SQL of users. Device counts and last-seen come from one grouped join, never a query per user. */
import type { Insertable } from 'kysely';
import { compiledShapes } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import type { UsersTable } from '../../storage/schema.js';

/** The user's own columns: selected, and grouped by to count each user's devices. */
const USER_COLUMNS = [
  'users.id',
  'users.login_name',
  'users.display_name',
  'users.role',
  'users.status',
  'users.created_at',
  'users.last_seen_at',
] as const;

function usersWithDevices(db: Db, networkId: string) {
  return (
    db
      .selectFrom('users')
      // The network in the join too: devices are indexed by (network_id, user_id), and a join on
      // user_id alone read every device of every network for each user listed.
      .leftJoin('devices', (join) =>
        join.onRef('devices.network_id', '=', 'users.network_id').onRef('devices.user_id', '=', 'users.id'),
      )
      .select((eb) => [
        ...USER_COLUMNS,
        eb.fn.count<number>('devices.id').as('device_count'),
        eb.fn.max<number | null>('devices.last_seen_at').as('device_seen_at'),
      ])
      .where('users.network_id', '=', networkId)
      .groupBy([...USER_COLUMNS])
  );
}

export type UserRow = Awaited<ReturnType<typeof findUser>> & {};

/** The user list query, unexecuted (a test holds its plan). */
export function listUsersQuery(db: Db, networkId: string, role?: string) {
  let query = usersWithDevices(db, networkId);
  if (role) query = query.where('users.role', '=', role);
  return query.orderBy('users.created_at').orderBy('users.id');
}

/** The user list, built once with and once without a role (storage/compiled-query.ts). */
const usersOf = compiledShapes(
  (role: boolean) => (role ? 'role' : 'all'),
  (role) => (db, p: Record<string, string>) => listUsersQuery(db, p.networkId as string, role ? p.role : undefined),
);

export async function listUsers(db: Db, networkId: string, role?: string) {
  return role ? usersOf(true)(db, { networkId, role }) : usersOf(false)(db, { networkId });
}

export async function findUser(db: Db, networkId: string, id: string) {
  return usersWithDevices(db, networkId).where('users.id', '=', id).executeTakeFirst();
}

/** A user by id or login name (auth keys and device filters accept either). */
export async function findUserId(db: Db, networkId: string, idOrLogin: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('network_id', '=', networkId)
    .where((eb) => eb.or([eb('id', '=', idOrLogin), eb('login_name', '=', idOrLogin)]))
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

/**
 * A policy's ETag is the whole SHA-256 of its text (policy/etag.ts), where it was the first 32
 * hex digits. Every stored version gets the whole digest here: Tailscale's GitOps pusher
 * compares the ETag with its file's digest, and a policy left with the short one would look
 * edited by someone else at its next run (and a PUT of the same text would make a new version).
 *
 * The digest is written out here rather than imported: a migration must do the same thing on
 * every database it ever runs on, whatever the live code later becomes. Versions are read a
 * page at a time, as texts may be up to 1 MiB each.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

const PAGE = 100;

export async function up(migrating: Kysely<unknown>): Promise<void> {
  // Migrations are written against no schema type; at this point the tables are those of Database.
  const db = migrating as unknown as Kysely<Database>;
  let after = '';
  for (;;) {
    const rows = await db
      .selectFrom('policies')
      .select(['id', 'text', 'etag'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(PAGE)
      .execute();
    for (const row of rows) {
      const etag = `"${createHash('sha256').update(row.text).digest('hex')}"`;
      if (row.etag !== etag) await db.updateTable('policies').set({ etag }).where('id', '=', row.id).execute();
    }
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.id;
  }
}

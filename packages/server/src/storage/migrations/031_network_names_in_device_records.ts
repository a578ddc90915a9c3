/**
 * A device's record shows its DNS name, `<device name>.<network DNS domain>`, and the domain
 * is the network's (`networks.dns_domain`, or one made from `networks.name`). Servers keep
 * device records by `devices.record_version` (migrations 011, 018, 021), so a change of either
 * network column must move the version of every device of the network, or a kept record, and
 * the list bodies built from it, would go on showing the old domain. Both columns change
 * rarely, by an admin, so rewriting the network's device rows then costs nothing that matters;
 * the devices' own triggers then move the list cursor (SQLite) or stamp (PostgreSQL) as for
 * any other change a list shows.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`
      create function networks_device_names() returns trigger language plpgsql as $$
      begin
        update devices set record_version = record_version + 1 where network_id = new.id;
        return null;
      end $$`.execute(db);
    await sql`
      create trigger networks_device_names after update of name, dns_domain on networks
      for each row
      when (old.name is distinct from new.name or old.dns_domain is distinct from new.dns_domain)
      execute function networks_device_names()`.execute(db);
    return;
  }
  await sql`
    create trigger networks_device_names after update of name, dns_domain on networks
    when old.name is not new.name or old.dns_domain is not new.dns_domain
    begin update devices set record_version = record_version + 1 where network_id = new.id; end`.execute(db);
}

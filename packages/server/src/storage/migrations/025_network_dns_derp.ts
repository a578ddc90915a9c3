/**
 * A network's DNS and relay settings (PATCH /v1/network `dns` and `derp`):
 *
 * - `networks.dns_domain`: the MagicDNS domain an admin chose; null keeps the default,
 *   `<network name>.warren.internal`. A column of its own because every device record names it
 *   (`dnsName`).
 * - `networks.dns`: JSON `{ magicDns, nameservers, searchDomains }`; null: MagicDNS on, no
 *   nameservers, no search domains.
 * - `networks.derp`: JSON `{ embedded, regions }` (Tailscale DERP map regions); null: the
 *   embedded relay when the server runs one, and the regions the server was started with.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('networks').addColumn('dns_domain', 'text').execute();
  await db.schema.alterTable('networks').addColumn('dns', 'text').execute();
  await db.schema.alterTable('networks').addColumn('derp', 'text').execute();
}

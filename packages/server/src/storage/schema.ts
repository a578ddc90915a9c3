/**
 * Table types for Kysely. One representation for both dialects: times are epoch
 * milliseconds (integers), booleans are 0/1 integers, lists are JSON text. PostgreSQL's
 * int8 is parsed to a number in database.ts, so counts and times read the same everywhere.
 */
import type { Generated } from 'kysely';

export interface NetworksTable {
  id: string;
  name: string;
  plan: string;
  created_at: number;
  /** Next address index to hand out; monotonic so freed addresses are not reused soon. */
  next_addr_index: number;
  /** Bumped by every change that can alter any device's netmap. */
  netmap_epoch: number;
  /** Bumped when a call takes a device online or offline (see migration 003). */
  presence_epoch: Generated<number>;
  /** Rows in `devices` and `users` of the network, kept by triggers (see migration 009). */
  device_count: Generated<number>;
  user_count: Generated<number>;
  /** The device change cursor and the count of removed devices (SQLite only; migration 012). */
  device_change_seq: Generated<number>;
  device_removals: Generated<number>;
  /** Moved by every write of the network's routes (SQLite only; migration 038). */
  route_change_seq: Generated<number>;
  /** 1: new devices wait for approval. Read at enrollment (migration 018). */
  device_approval: Generated<number>;
  /** How long a device's login lasts: a duration (`180d`) or `0` for never. */
  node_key_expiry: Generated<string>;
  /** 1: Tailscale clients log their flows and upload them here (migration 024). */
  flow_logs: Generated<number>;
  /** The MagicDNS domain an admin set; null: `<network name>.warren.internal` (migration 025). */
  dns_domain: string | null;
  /** JSON `{ magicDns, nameservers, searchDomains }` of PATCH /v1/network; null: the defaults. */
  dns: string | null;
  /** JSON `{ embedded, regions }` of PATCH /v1/network; null: the defaults. */
  derp: string | null;
}

export interface UsersTable {
  id: string;
  network_id: string;
  login_name: string;
  display_name: string;
  role: string;
  status: string;
  created_at: number;
  last_seen_at: number | null;
  /** The user's devices, kept by triggers (migration 026). */
  device_count: Generated<number>;
  /** The newest heartbeat of the user's devices, to within a minute (migration 026). */
  devices_seen_at: number | null;
}

export interface KeysTable {
  id: string;
  network_id: string;
  type: string; // 'api' | 'auth'
  secret_hash: string; // hex SHA-256 of the whole secret
  name: string | null;
  description: string;
  scopes: string; // JSON array
  reusable: number;
  ephemeral: number;
  tags: string; // JSON array
  user_id: string | null;
  rate_limit: number | null;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  used_at: number | null;
  uses: number;
  last_used_at: number | null;
  created_by: string | null;
  /** 1: devices this auth key enrolls skip approval (migration 018). */
  pre_approved: Generated<number>;
}

/** OAuth clients of Tailscale's API v2 (migration 022). */
export interface OAuthClientsTable {
  id: string;
  network_id: string;
  secret_hash: string; // hex SHA-256 of the whole secret
  description: string;
  scopes: string; // JSON array of Tailscale scope names
  tags: string; // JSON array
  rate_limit: number | null;
  created_at: number;
  updated_at: number;
  revoked_at: number | null;
  created_by: string | null;
  /** When the API key that made it expires (migration 045); null: until deleted. */
  expires_at: number | null;
}

/** Access tokens of OAuth clients (migration 022). */
export interface OAuthTokensTable {
  token_hash: string; // hex SHA-256 of the whole token
  client_id: string;
  scopes: string; // JSON array of Tailscale scope names, as granted
  created_at: number;
  expires_at: number;
}

export interface PoliciesTable {
  id: string;
  network_id: string;
  version: number;
  text: string;
  etag: string;
  created_at: number;
  created_by: string | null;
}

export interface DevicesTable {
  id: string;
  network_id: string;
  name: string;
  hostname: string;
  os: string;
  user_id: string | null;
  tags: string; // JSON array, for display; device_tags is the filter index
  node_key: string;
  addr_index: number;
  client_version: string | null;
  key_id: string | null;
  ephemeral: number;
  created_at: number;
  last_seen_at: number | null;
  /** 1 after an explicit disconnect, until the next heartbeat. */
  disconnected: number;
  expires_at: number | null;
  node_token_hash: string;
  netmap_version: number;
  netmap_hash: string | null;
  /** The name is `name_base` (seq 0) or `name_base-name_seq`. Defaulted, so optional on insert. */
  name_base: Generated<string>;
  name_seq: Generated<number>;
  /** Canonical, sorted, comma-joined prefixes of the last advertised set ('' for none). */
  advertised_routes: Generated<string>;
  /** Moves when anything a list record shows changes, presence aside (migration 011). */
  record_version: Generated<number>;
  /** The network's device_change_seq at this device's last listed change (SQLite; migration 012). */
  change_seq: Generated<number>;
  /** `native` or `tailscale`, and the Tailscale protocol's own fields (migration 019). */
  protocol: Generated<string>;
  machine_key: string | null;
  disco_key: string | null;
  /** Comma-joined `ip:port` UDP endpoints ('' for none). */
  endpoints: Generated<string>;
  home_derp: Generated<number>;
  /** The client's last Hostinfo, as JSON. */
  hostinfo: string | null;
  /** 1 while that Hostinfo carries SSH host keys: the device runs Tailscale SSH (migration 041). */
  ssh_enabled: Generated<number>;
  /** 0 while the device waits for an admin's approval (migration 018). */
  authorized: Generated<number>;
  /** 1: the device's login never expires, whatever `expires_at` says. */
  key_expiry_disabled: Generated<number>;
  /** 1 once `expires_at` passed (set by the expiry sweep or an admin): out of every netmap. */
  key_expired: Generated<number>;
  /** Public log id of its flow log uploads (hex SHA-256 of the private id; migration 024). */
  flow_log_id: string | null;
}

export interface DeviceTagsTable {
  network_id: string;
  tag: string;
  device_id: string;
}

export interface RoutesTable {
  id: string;
  network_id: string;
  device_id: string;
  prefix: string;
  state: string; // pending | approved | disabled
  advertised: number;
  auto_approved: number;
  approved_at: number | null;
  approved_by: string | null;
  created_at: number;
}

export interface ConnectionsTable {
  seq: Generated<number>;
  network_id: string;
  logged_at: number;
  start_at: number;
  end_at: number;
  proto: string;
  src_device_id: string | null;
  src_addr: string;
  dst_device_id: string | null;
  dst_addr: string;
  tx_bytes: number;
  rx_bytes: number;
  tx_packets: number;
  rx_packets: number;
  reported_by: string;
}

export interface AuditLogTable {
  seq: Generated<number>;
  network_id: string | null;
  time: number;
  key_id: string | null;
  key_name: string | null;
  device_id: string | null;
  method: string;
  path: string;
  status: number;
  client_addr: string;
  request_id: string;
  action: string | null;
  target: string | null;
  /** The person of a console session (user_login as it was then); nullable, so optional on insert. */
  user_id: string | null;
  user_login: string | null;
}

/** A rate-limit bucket (`key:…`, `addr:…`): the hits of its live slots, and its newest slot. */
/** PostgreSQL only: counters whose sum moves with anything a device list shows (migration 029). */
export interface DeviceListStampsTable {
  network_id: string;
  slot: number;
  seq: number;
}

/** PostgreSQL only: moves with anything the network's stamped reads show (migration 032). */
export interface ReadStampsTable {
  network_id: string;
  seq: number;
}

export interface RateLimitBucketsTable {
  bucket: string;
  total: number;
  last_at: number;
  /** PostgreSQL: every slot of the bucket at or before it is deleted (migration 037); null, none known. */
  swept_to: number | null;
}

/** The hits a bucket took in one millisecond. */
export interface RateLimitSlotsTable {
  bucket: string;
  at: number;
  hits: number;
}

/** A secret of the server (hex), created on first use; see lib/log-ids.ts. */
export interface ServerSecretsTable {
  name: string;
  value: string;
}

/** A console session: the cookie holds the secret, the row only its SHA-256. */
export interface SessionsTable {
  secret_hash: string;
  network_id: string;
  user_id: string;
  role: string;
  /** How the person signed in: `sso` or `link`. */
  method: string;
  created_at: number;
  last_used_at: number;
  expires_at: number;
}

/** A network's OpenID Connect provider. */
export interface SsoConfigsTable {
  network_id: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  allowed_domains: string; // JSON array
  enforce: number;
  updated_at: number;
}

/** A sign-in started at /auth/login and not yet finished at /auth/callback. */
export interface SsoLoginsTable {
  state_hash: string;
  network_id: string;
  code_verifier: string;
  nonce: string;
  return_to: string;
  expires_at: number;
}

/** A one-time sign-in link (`warren console login`). */
export interface LoginLinksTable {
  token_hash: string;
  network_id: string;
  user_id: string;
  expires_at: number;
}

/** A Tailscale client's login waiting for a person's approval (migration 023). */
export interface MachineLoginsTable {
  token_hash: string;
  machine_key: string;
  node_key: string;
  hostname: string;
  os: string;
  client_version: string | null;
  /** JSON array: the tags the client asked for (`--advertise-tags`). */
  request_tags: string;
  ephemeral: number;
  old_node_key: string | null;
  created_at: number;
  expires_at: number;
  approved_at: number | null;
  /** The user who approved (the device may be another user's). */
  approved_by: string | null;
  network_id: string | null;
  device_id: string | null;
  refusal: string | null;
}

export interface SshChecksTable {
  token_hash: string;
  network_id: string;
  src_device_id: string;
  dst_device_id: string;
  local_user: string;
  /** How long a confirmation lets the same source in again (0: every connection asks). */
  period_ms: number;
  created_at: number;
  /** Until when the URL may be confirmed. */
  expires_at: number;
  approved_at: number | null;
  approved_by: string | null;
}

export interface Database {
  networks: NetworksTable;
  users: UsersTable;
  keys: KeysTable;
  oauth_clients: OAuthClientsTable;
  oauth_tokens: OAuthTokensTable;
  policies: PoliciesTable;
  devices: DevicesTable;
  device_tags: DeviceTagsTable;
  routes: RoutesTable;
  connections: ConnectionsTable;
  audit_log: AuditLogTable;
  device_list_stamps: DeviceListStampsTable;
  /** Counters of the same shape that move with what routes show of devices (migration 044). */
  device_record_stamps: DeviceListStampsTable;
  read_stamps: ReadStampsTable;
  rate_limit_buckets: RateLimitBucketsTable;
  rate_limit_slots: RateLimitSlotsTable;
  server_secrets: ServerSecretsTable;
  sessions: SessionsTable;
  sso_configs: SsoConfigsTable;
  sso_logins: SsoLoginsTable;
  login_links: LoginLinksTable;
  machine_logins: MachineLoginsTable;
  ssh_checks: SshChecksTable;
}

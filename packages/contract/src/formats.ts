/**
 * Identifier and secret formats. IDs are opaque with a type prefix; secrets carry a
 * recognisable prefix so secret scanners can find them.
 */
export const ID_PREFIX = {
  network: 'net',
  device: 'dev',
  user: 'usr',
  key: 'key',
  route: 'rt',
  connection: 'log',
  audit: 'aud',
  policy: 'pol',
  event: 'evt',
  webhook: 'whk',
  delivery: 'dlv',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

export const SECRET_PREFIX = {
  api: 'wrn_api_',
  auth: 'wrn_auth_',
  node: 'wrn_node_',
  /** An OAuth client's secret (Tailscale API v2, `keyType: "client"`). */
  client: 'wrn_client_',
  /** An access token an OAuth client obtained from `/api/v2/oauth/token` (one hour). */
  oauth: 'wrn_oauth_',
} as const;

export type SecretKind = keyof typeof SECRET_PREFIX;

export const SCOPES = ['read', 'devices', 'acls', 'keys', 'users', 'webhooks', 'all'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * The resources of Tailscale's OAuth scopes (API v2's OAuth clients). Each is a scope (write
 * and read) and, with `:read`, a read-only one; `all` and `all:read` cover every resource.
 */
export const TAILSCALE_RESOURCES = [
  'devices:core',
  'devices:routes',
  'policy_file',
  'auth_keys',
  'oauth_keys',
  'users',
  'feature_settings',
] as const;
export type TailscaleResource = (typeof TAILSCALE_RESOURCES)[number];

export const ROLES = ['owner', 'admin', 'network-admin', 'it-admin', 'auditor', 'member'] as const;
export type Role = (typeof ROLES)[number];

export const PLANS = ['free', 'premium'] as const;
export type Plan = (typeof PLANS)[number];

export const KEY_STATES = ['valid', 'expired', 'revoked', 'used'] as const;
export type KeyState = (typeof KEY_STATES)[number];

export const ROUTE_STATES = ['pending', 'approved', 'disabled'] as const;
export type RouteState = (typeof ROUTE_STATES)[number];

/**
 * The tag grammar, stated once for devices, auth keys and the policy (its tagOwners, selectors
 * and tests): `tag:` followed by a lowercase letter or digit, then letters, digits and dashes
 * (as Tailscale), 63 at the most, so every tag is also a DNS label.
 */
export const TAG_PATTERN = '^tag:[a-z0-9][a-z0-9-]{0,62}$';
export const TAG_RE = new RegExp(TAG_PATTERN);
/** The grammar in words, for the policy's error messages. */
export const TAG_SYNTAX =
  'tag names are "tag:" then up to 63 lowercase letters, digits and dashes, starting with a letter or digit';

/**
 * A DNS name: labels of letters, digits and dashes (not at either end), dot-separated, lower
 * case, the last label not all digits (RFC 3696 §2: `1.2.3.4` reads as an address, not a name).
 */
export const DNS_NAME_PATTERN =
  '^(?=.{1,253}$)(?!(.*\\.)?[0-9]+$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$';
/** The grammar in words, for the answer to a name that breaks it. */
export const DNS_NAME_SYNTAX =
  'is not a DNS name: dot-separated labels of lower-case letters, digits and dashes, without a trailing dot, the last label not all digits';

/**
 * The embedded relay's region in the DERP map (`warren serve --derp`): high, as Headscale's 999,
 * to stay clear of Tailscale's own; other regions take other ids.
 */
export const EMBEDDED_DERP_REGION_ID = 900;

/** An integer followed by exactly one unit: s, m, h or d. */
export const DURATION_PATTERN = '^[0-9]{1,9}[smhd]$';
export const DURATION_RE = new RegExp(DURATION_PATTERN);

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses `90s`, `15m`, `24h`, `7d` into milliseconds; `undefined` when malformed. */
export function parseDuration(text: string): number | undefined {
  if (!DURATION_RE.test(text)) return undefined;
  const unit = text[text.length - 1] as keyof typeof UNIT_MS;
  return Number(text.slice(0, -1)) * UNIT_MS[unit];
}

/** A device's login lasts this long unless the network says otherwise (as Tailscale's default). */
export const DEFAULT_NODE_KEY_EXPIRY = '180d';

export const MAX_KEY_LIFETIME_MS = 365 * UNIT_MS.d;
export const DEFAULT_KEY_LIFETIME = '90d';

/** A device's public key: `nodekey:` and 64 hex digits. */
export const NODE_KEY_PATTERN = '^nodekey:[0-9a-f]{64}$';

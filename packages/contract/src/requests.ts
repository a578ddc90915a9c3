/**
 * Request bodies and query strings. Bodies reject unknown fields (`additionalProperties:
 * false` → 400 unknown_field). Values whose error has its own code (durations, tags,
 * prefixes) are checked by the services so they can answer with that code.
 */
import { type Static, Type } from 'typebox';
import { DerpRegionSetting } from './derp-region.js';
import { DNS_NAME_PATTERN, DNS_NAME_SYNTAX, ROLES, type Role } from './formats.js';
import { Nullable } from './nullable.js';

const closed = { additionalProperties: false } as const;
/**
 * A value with its own error code, bounded here: a breach of the bound (or of the type) is
 * still a malformed tag, prefix or duration, so it answers with that code (`x-problem-code`,
 * read by the server's validation errors), not with `invalid_request`.
 */
const TagValue = Type.String({ maxLength: 80, 'x-problem-code': 'invalid_tag' });
const PrefixValue = Type.String({ maxLength: 64, 'x-problem-code': 'invalid_prefix' });
const DurationValue = (description?: string) =>
  Type.String({ maxLength: 16, 'x-problem-code': 'invalid_duration', ...(description ? { description } : {}) });
const Tags = Type.Array(TagValue, { maxItems: 64 });
const Prefixes = Type.Array(PrefixValue, { maxItems: 256 });

export const CreateKeyBody = Type.Object(
  {
    type: Type.Optional(Type.Union([Type.Literal('auth'), Type.Literal('api')])),
    // auth keys
    reusable: Type.Optional(Type.Boolean()),
    ephemeral: Type.Optional(Type.Boolean()),
    preApproved: Type.Optional(Type.Boolean()),
    tags: Type.Optional(Tags),
    user: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
    description: Type.Optional(Type.String({ maxLength: 256 })),
    // api keys
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    scopes: Type.Optional(Type.Array(Type.String(), { maxItems: 6 })),
    rateLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    // both
    expiresIn: Type.Optional(DurationValue()),
  },
  closed,
);
export type CreateKeyRequest = Static<typeof CreateKeyBody>;

export const KeyListQuery = Type.Object({
  type: Type.Optional(Type.Union([Type.Literal('auth'), Type.Literal('api')])),
  state: Type.Optional(
    Type.Union([Type.Literal('valid'), Type.Literal('expired'), Type.Literal('revoked'), Type.Literal('used')]),
  ),
});

/** One of the contract's six roles: anything else is a 400 invalid_request naming them all. */
// Unsafe only names the static type: a union built by map() is not a tuple TypeBox can infer.
const RoleName = Type.Unsafe<Role>(Type.Union(ROLES.map((role) => Type.Literal(role))));

export const CreateUserBody = Type.Object(
  {
    loginName: Type.String({ minLength: 1, maxLength: 254 }),
    displayName: Type.Optional(Type.String({ maxLength: 128 })),
    role: Type.Optional(RoleName),
  },
  closed,
);
export type CreateUserRequest = Static<typeof CreateUserBody>;

export const USER_STATUSES = ['active', 'suspended'] as const;

export const PatchUserBody = Type.Object(
  {
    role: Type.Optional(RoleName),
    status: Type.Optional(Type.Union(USER_STATUSES.map((s) => Type.Literal(s)))),
    displayName: Type.Optional(Type.String({ maxLength: 128 })),
  },
  closed,
);
export type PatchUserRequest = Static<typeof PatchUserBody>;

export const UserListQuery = Type.Object({ role: Type.Optional(RoleName) });
export type UserListRequest = Static<typeof UserListQuery>;

export const DeviceListQuery = Type.Object({
  // An empty user or device names nothing: 400, as an empty filter of either log is.
  user: Type.Optional(Type.String({ minLength: 1 })),
  tag: Type.Optional(Type.Array(Type.String())),
  online: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
  fields: Type.Optional(Type.Union([Type.Literal('default'), Type.Literal('all')])),
  q: Type.Optional(Type.String({ maxLength: 64, description: 'a part of the name, or an address of the device' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
});

/** PATCH /v1/devices/{id}: what an admin may change on a device besides its tags. */
export const PatchDeviceBody = Type.Object({ keyExpiryDisabled: Type.Optional(Type.Boolean()) }, closed);
export type PatchDeviceRequest = Static<typeof PatchDeviceBody>;

/** `x-pattern-syntax`: what the server answers, in words, for a value the pattern refuses. */
const DnsName = Type.String({ maxLength: 253, pattern: DNS_NAME_PATTERN, 'x-pattern-syntax': DNS_NAME_SYNTAX });
/** Every device's map carries them all: bounded so a map stays small. */
const SPLIT_DNS_DOMAINS_MAX = 64;
const EXTRA_DNS_RECORDS_MAX = 256;

/** PATCH /v1/network: the network's settings; a field left out keeps its value (in `dns` and `derp` too). */
export const PatchNetworkBody = Type.Object(
  {
    deviceApproval: Type.Optional(Type.Boolean()),
    nodeKeyExpiry: Type.Optional(DurationValue('a duration (180d), or 0 for never')),
    flowLogs: Type.Optional(Type.Boolean()),
    dns: Type.Optional(
      Type.Object(
        {
          domain: Type.Optional(
            Nullable(
              Type.String({
                maxLength: 253,
                pattern: DNS_NAME_PATTERN,
                'x-pattern-syntax': DNS_NAME_SYNTAX,
                description: 'the MagicDNS domain; null: <network name>.warren.internal',
              }),
            ),
          ),
          magicDns: Type.Optional(Type.Boolean()),
          nameservers: Type.Optional(Type.Array(Type.String({ maxLength: 45 }), { maxItems: 16 })),
          searchDomains: Type.Optional(Type.Array(DnsName, { maxItems: 16 })),
          splitDns: Type.Optional(
            Type.Record(Type.String({ maxLength: 253 }), Type.Array(Type.String({ maxLength: 45 }), { maxItems: 16 }), {
              maxProperties: SPLIT_DNS_DOMAINS_MAX,
              description:
                'DNS domain → nameserver IPs for names under it (split DNS); an empty list: the client answers those names itself (extra records) and forwards none',
            }),
          ),
          extraRecords: Type.Optional(
            Type.Array(
              Type.Object(
                {
                  name: DnsName,
                  type: Type.Union([Type.Literal('A'), Type.Literal('AAAA')]),
                  value: Type.String({ maxLength: 45, description: 'an IPv4 address for A, an IPv6 address for AAAA' }),
                },
                closed,
              ),
              { maxItems: EXTRA_DNS_RECORDS_MAX },
            ),
          ),
        },
        closed,
      ),
    ),
    derp: Type.Optional(
      Type.Object(
        {
          embedded: Type.Optional(Type.Boolean()),
          regions: Type.Optional(Type.Array(DerpRegionSetting, { maxItems: 64 })),
        },
        closed,
      ),
    ),
  },
  closed,
);
export type PatchNetworkRequest = Static<typeof PatchNetworkBody>;

export const SetTagsBody = Type.Object({ tags: Tags }, closed);
export type SetTagsRequest = Static<typeof SetTagsBody>;

export const RouteListQuery = Type.Object({
  state: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('disabled')])),
  device: Type.Optional(Type.String({ minLength: 1 })),
});

/** Paging of both logs: `since` (duration, default 1h) or `cursor`; `limit` 1–1000. */
const logPaging = {
  // A duration like expiresIn, so that a since given twice or too long is invalid_duration too.
  since: Type.Optional(DurationValue('how far back to start: an integer and one of s, m, h, d (default 1h)')),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
};
/** The paging both logs share. */
export const LogPageQuery = Type.Object(logPaging);
export type LogPageRequest = Static<typeof LogPageQuery>;
/** GET /v1/logs/connections: paging plus the `device` filter. */
export const ConnectionLogQuery = Type.Object({ ...logPaging, device: Type.Optional(Type.String()) });
export type ConnectionLogRequest = Static<typeof ConnectionLogQuery>;
/** GET /v1/logs/audit: paging plus the `key` filter. */
export const AuditLogQuery = Type.Object({
  ...logPaging,
  // An empty id names no key: 400, as an empty device filter of the connection log is.
  key: Type.Optional(Type.String({ minLength: 1 })),
  changes: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description: 'true: only calls that changed state (entries with an action), not reads or heartbeats',
    }),
  ),
});
export type AuditLogRequest = Static<typeof AuditLogQuery>;

export const RegisterBody = Type.Object(
  {
    // The machine's host name as its system reports it: a Linux one may be 64 characters, a
    // BSD or macOS one a whole DNS name; the device's name is its first label, within 63.
    hostname: Type.String({ minLength: 1, maxLength: 253 }),
    os: Type.String({ minLength: 1, maxLength: 32 }),
    nodeKey: Type.String({ maxLength: 80 }),
    clientVersion: Type.Optional(Type.String({ maxLength: 64 })),
    advertiseRoutes: Type.Optional(Prefixes),
  },
  closed,
);
export type RegisterRequest = Static<typeof RegisterBody>;

export const HeartbeatBody = Type.Object({ advertiseRoutes: Type.Optional(Prefixes) }, closed);
export type HeartbeatRequest = Static<typeof HeartbeatBody>;

const ReportedEndpoint = Type.Object(
  { deviceId: Type.Optional(Type.Union([Type.String(), Type.Null()])), addr: Type.String({ maxLength: 64 }) },
  closed,
);

export const ReportedConnection = Type.Object(
  {
    start: Type.String({ maxLength: 40 }),
    end: Type.String({ maxLength: 40 }),
    proto: Type.String({ maxLength: 8 }),
    src: ReportedEndpoint,
    dst: ReportedEndpoint,
    txBytes: Type.Integer({ minimum: 0 }),
    rxBytes: Type.Integer({ minimum: 0 }),
    txPackets: Type.Integer({ minimum: 0 }),
    rxPackets: Type.Integer({ minimum: 0 }),
  },
  closed,
);
export type ReportedConnectionRequest = Static<typeof ReportedConnection>;

export const ConnectionsBody = Type.Object({ entries: Type.Array(ReportedConnection, { maxItems: 1000 }) }, closed);
export type ConnectionsRequest = Static<typeof ConnectionsBody>;

/**
 * TypeBox schemas of every resource the API returns, named by `$id` so the OpenAPI document
 * reads `Device`, not `def-0`. Response schemas are also the allow-list of what leaves the
 * server: a field not declared here is stripped by the serializer.
 */
import { type Static, Type } from 'typebox';
import { DerpRegion, type DerpRegionBody } from './derp-region.js';
import type { PolicyProblem } from './errors.js';
import { EVENT_COMPONENTS } from './events.js';
import { KEY_STATES, PLANS, ROLES, ROUTE_STATES, SCOPES } from './formats.js';
import { literals, Nullable, NullableTime, Time } from './nullable.js';
import { Me, SsoConfig } from './people.js';

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String(),
    detail: Type.String(),
    requestId: Type.String(),
    scope: Type.Optional(Type.String({ description: 'the scope that was needed (insufficient_scope)' })),
    errors: Type.Optional(
      Type.Array(Type.Object({ line: Type.Integer(), column: Type.Integer(), msg: Type.String() })),
    ),
    index: Type.Optional(Type.Integer({ description: 'index of the first bad entry of a batch' })),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details' },
);

export const UserRef = Type.Object({ id: Type.String(), loginName: Type.String() }, { $id: 'UserRef' });

const DeviceRouteRef = Type.Object({
  id: Type.String(),
  prefix: Type.String(),
  state: literals(ROUTE_STATES),
  advertised: Type.Boolean(),
  primary: Type.Boolean(),
  exitNode: Type.Boolean({ description: 'a default route (0.0.0.0/0 or ::/0): half of an exit node' }),
});

const deviceListFields = {
  id: Type.String(),
  name: Type.String(),
  hostname: Type.String(),
  os: Type.String(),
  online: Type.Boolean(),
  user: Type.Union([Type.Ref('UserRef'), Type.Null()]),
  tags: Type.Array(Type.String()),
  created: Time,
  lastSeen: NullableTime,
  authorized: Type.Boolean({
    description: 'false while the device waits for approval (network setting deviceApproval)',
  }),
  keyExpiry: Nullable(
    Type.String({
      format: 'date-time',
      description: "when the device's login expires; null when it never does (keyExpiryDisabled, or nodeKeyExpiry 0)",
    }),
  ),
  keyExpiryDisabled: Type.Boolean(),
  keyExpired: Type.Boolean({ description: 'the login expired: the device is in no netmap until it logs in again' }),
};

export const Device = Type.Object(
  {
    ...deviceListFields,
    addresses: Type.Optional(Type.Array(Type.String())),
    routes: Type.Optional(Type.Array(DeviceRouteRef)),
    clientVersion: Type.Optional(Nullable(Type.String())),
    keyId: Type.Optional(Nullable(Type.String())),
    ephemeral: Type.Optional(Type.Boolean()),
    expires: Type.Optional(NullableTime),
    exitNode: Type.Optional(
      Type.Boolean({ description: 'the device serves as an exit node: 0.0.0.0/0 and ::/0 approved and advertised' }),
    ),
    protocol: Type.Optional(
      literals(['native', 'tailscale'] as const, {
        description: "what the device speaks: Warren's node protocol or Tailscale's control protocol",
      }),
    ),
    dnsName: Type.Optional(Type.String({ description: 'its MagicDNS name, <name>.<network domain>' })),
  },
  { $id: 'Device', description: 'A device; detail fields appear on GET /v1/devices/{id} and with ?fields=all' },
);

export const User = Type.Object(
  {
    id: Type.String(),
    loginName: Type.String(),
    displayName: Type.String(),
    role: literals(ROLES),
    status: Type.String(),
    created: Time,
    lastSeen: NullableTime,
    deviceCount: Type.Integer(),
  },
  { $id: 'User' },
);

export const Network = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    plan: literals(PLANS),
    limits: Type.Object({
      users: Nullable(Type.Integer()),
      devices: Nullable(Type.Integer()),
      logRetentionDays: Type.Integer(),
      webhooks: Nullable(Type.Integer()),
    }),
    usage: Type.Object({ users: Type.Integer(), devices: Type.Integer() }),
    deviceApproval: Type.Boolean({ description: 'new devices wait for an admin to approve them' }),
    nodeKeyExpiry: Type.String({ description: "how long a device's login lasts (a duration, or 0 for never)" }),
    flowLogs: Type.Boolean({
      description: 'Tailscale clients log their network flows into the connection log (docs/TAILSCALE.md)',
    }),
    dns: Type.Object(
      {
        domain: Type.String({ description: 'the MagicDNS domain: devices are <name>.<domain>' }),
        magicDns: Type.Boolean({ description: 'Tailscale clients answer the names of their peers themselves' }),
        nameservers: Type.Array(Type.String(), { description: 'resolvers Tailscale clients use for other names' }),
        searchDomains: Type.Array(Type.String()),
        splitDns: Type.Record(Type.String(), Type.Array(Type.String()), {
          description:
            'split DNS: names under each domain go to its nameservers; an empty list: the client answers them itself (extra records) and forwards none',
        }),
        extraRecords: Type.Array(
          Type.Object({ name: Type.String(), type: literals(['A', 'AAAA'] as const), value: Type.String() }),
          { description: 'records Tailscale clients answer themselves (A: an IPv4 address, AAAA: an IPv6 one)' },
        ),
      },
      { description: 'what Tailscale clients are told about DNS' },
    ),
    derp: Type.Object(
      {
        embedded: Type.Boolean({ description: "the server's embedded relay is in the DERP map when it runs one" }),
        regions: Type.Array(DerpRegion),
      },
      { description: 'the relays (DERP map) Tailscale clients are given' },
    ),
    sso: Type.Object(
      {
        configured: Type.Boolean(),
        enforce: Type.Boolean(),
        redirectUri: Nullable(
          Type.String({
            description:
              'the URI to register with the identity provider, before setting it up; null until the server has a public URL',
          }),
        ),
      },
      { description: 'whether single sign-on is set up (its settings: GET /v1/network/sso)' },
    ),
  },
  { $id: 'Network', description: 'limits are null when unlimited' },
);

export const Key = Type.Object(
  {
    id: Type.String(),
    type: literals(['auth', 'api'] as const),
    key: Type.Optional(Type.String({ description: 'the secret; only in the response to POST /v1/keys' })),
    name: Type.Optional(Type.String()),
    description: Type.String(),
    scopes: Type.Array(literals(SCOPES)),
    reusable: Type.Optional(Type.Boolean()),
    ephemeral: Type.Optional(Type.Boolean()),
    preApproved: Type.Optional(Type.Boolean({ description: 'devices this auth key enrolls skip approval' })),
    tags: Type.Optional(Type.Array(Type.String())),
    user: Type.Optional(Nullable(Type.String())),
    rateLimit: Type.Optional(Type.Integer()),
    created: Time,
    expires: Time,
    state: literals(KEY_STATES),
    uses: Type.Integer(),
    lastUsed: NullableTime,
    createdBy: Nullable(Type.String()),
  },
  { $id: 'Key' },
);

export const Route = Type.Object(
  {
    id: Type.String(),
    deviceId: Type.String(),
    deviceName: Type.String(),
    prefix: Type.String(),
    state: literals(ROUTE_STATES),
    advertised: Type.Boolean(),
    autoApproved: Type.Boolean(),
    primary: Type.Boolean(),
    exitNode: Type.Boolean({
      description: 'a default route (0.0.0.0/0 or ::/0): with its pair approved, the device is an exit node',
    }),
    approvedAt: NullableTime,
    approvedBy: Nullable(Type.String()),
    created: Time,
  },
  { $id: 'Route' },
);

const Endpoint = Type.Object({
  deviceId: Nullable(Type.String()),
  deviceName: Type.Optional(
    Nullable(
      Type.String({
        description: "the device's name when the entry was read; null when there is no device or it was deleted",
      }),
    ),
  ),
  addr: Type.String(),
});

export const ConnectionEntry = Type.Object(
  {
    id: Type.String(),
    start: Time,
    end: Time,
    proto: Type.String(),
    src: Endpoint,
    dst: Endpoint,
    txBytes: Type.Integer(),
    rxBytes: Type.Integer(),
    txPackets: Type.Integer(),
    rxPackets: Type.Integer(),
    reportedBy: Type.String(),
    logged: Time,
  },
  { $id: 'ConnectionEntry' },
);

export const AuditEntry = Type.Object(
  {
    id: Type.String(),
    time: Time,
    keyId: Nullable(Type.String()),
    keyName: Nullable(Type.String()),
    deviceId: Nullable(Type.String()),
    method: Type.String(),
    path: Type.String(),
    status: Type.Integer(),
    clientAddr: Type.String(),
    requestId: Type.String(),
    action: Nullable(Type.String()),
    target: Nullable(Type.String()),
    userId: Nullable(Type.String({ description: 'the person of a console session' })),
    userLogin: Nullable(Type.String()),
  },
  { $id: 'AuditEntry' },
);

const PolicyProblemSchema = Type.Object({ line: Type.Integer(), column: Type.Integer(), msg: Type.String() });

export const ValidationResult = Type.Object(
  {
    valid: Type.Boolean(),
    errors: Type.Array(PolicyProblemSchema),
    tests: Type.Array(
      Type.Object({
        line: Type.Integer({ description: 'the line the test entry starts on' }),
        src: Type.String({ description: 'its `src` as written ("" when missing)' }),
        passed: Type.Boolean(),
        failures: Type.Array(PolicyProblemSchema, {
          description: 'what failed: a malformed part, or an expectation the rules break (also in `errors`)',
        }),
      }),
      {
        description: "each entry of the policy's `tests`, in document order; empty when the text does not parse",
      },
    ),
  },
  { $id: 'ValidationResult' },
);

export const Peer = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    addresses: Type.Array(Type.String()),
    allowedIPs: Type.Array(Type.String()),
    tags: Type.Array(Type.String()),
    online: Type.Boolean(),
  },
  { $id: 'Peer' },
);

export const Netmap = Type.Object(
  { self: Type.Ref('Device'), peers: Type.Array(Type.Ref('Peer')), version: Type.Integer() },
  { $id: 'Netmap' },
);

/** Every named component, in the order they are registered with the server. */
export const COMPONENT_SCHEMAS = [
  Problem,
  UserRef,
  Device,
  User,
  Network,
  Key,
  Route,
  ConnectionEntry,
  AuditEntry,
  ValidationResult,
  Peer,
  Netmap,
  ...EVENT_COMPONENTS,
  SsoConfig,
  Me,
] as const;

// Static types, written out so clients get readable names rather than TypeBox inference
// across $ref (which resolves to unknown).
export type ProblemBody = Static<typeof Problem>;
export interface UserRefBody {
  id: string;
  loginName: string;
}
export interface DeviceRouteBody {
  id: string;
  prefix: string;
  state: (typeof ROUTE_STATES)[number];
  advertised: boolean;
  primary: boolean;
  exitNode: boolean;
}
export interface DeviceBody {
  id: string;
  name: string;
  hostname: string;
  os: string;
  online: boolean;
  user: UserRefBody | null;
  tags: string[];
  created: string;
  lastSeen: string | null;
  authorized: boolean;
  keyExpiry: string | null;
  keyExpiryDisabled: boolean;
  keyExpired: boolean;
  addresses?: string[];
  routes?: DeviceRouteBody[];
  clientVersion?: string | null;
  keyId?: string | null;
  ephemeral?: boolean;
  expires?: string | null;
  exitNode?: boolean;
  protocol?: 'native' | 'tailscale';
  dnsName?: string;
}
/** An extra DNS record Tailscale clients answer themselves (the network's `dns.extraRecords`). */
export interface DnsRecordBody {
  name: string;
  type: 'A' | 'AAAA';
  value: string;
}
export interface NetworkBody {
  id: string;
  name: string;
  plan: (typeof PLANS)[number];
  limits: { users: number | null; devices: number | null; logRetentionDays: number; webhooks: number | null };
  usage: { users: number; devices: number };
  deviceApproval: boolean;
  nodeKeyExpiry: string;
  flowLogs: boolean;
  dns: {
    domain: string;
    magicDns: boolean;
    nameservers: string[];
    searchDomains: string[];
    splitDns: Record<string, string[]>;
    extraRecords: DnsRecordBody[];
  };
  derp: { embedded: boolean; regions: DerpRegionBody[] };
  sso: { configured: boolean; enforce: boolean; redirectUri: string | null };
}
export interface KeyBody {
  id: string;
  type: 'auth' | 'api';
  key?: string;
  name?: string;
  description: string;
  scopes: (typeof SCOPES)[number][];
  reusable?: boolean;
  ephemeral?: boolean;
  preApproved?: boolean;
  tags?: string[];
  user?: string | null;
  rateLimit?: number;
  created: string;
  expires: string;
  state: (typeof KEY_STATES)[number];
  uses: number;
  lastUsed: string | null;
  createdBy: string | null;
}
export interface RouteBody {
  id: string;
  deviceId: string;
  deviceName: string;
  prefix: string;
  state: (typeof ROUTE_STATES)[number];
  advertised: boolean;
  autoApproved: boolean;
  primary: boolean;
  exitNode: boolean;
  approvedAt: string | null;
  approvedBy: string | null;
  created: string;
}
export interface ConnectionEntryBody {
  id: string;
  start: string;
  end: string;
  proto: string;
  src: { deviceId: string | null; deviceName?: string | null; addr: string };
  dst: { deviceId: string | null; deviceName?: string | null; addr: string };
  txBytes: number;
  rxBytes: number;
  txPackets: number;
  rxPackets: number;
  reportedBy: string;
  logged: string;
}
export interface AuditEntryBody {
  id: string;
  time: string;
  keyId: string | null;
  keyName: string | null;
  deviceId: string | null;
  method: string;
  path: string;
  status: number;
  clientAddr: string;
  requestId: string;
  action: string | null;
  target: string | null;
  userId: string | null;
  userLogin: string | null;
}
export interface PolicyTestResultBody {
  line: number;
  src: string;
  passed: boolean;
  failures: PolicyProblem[];
}
export interface ValidationResultBody {
  valid: boolean;
  errors: PolicyProblem[];
  tests: PolicyTestResultBody[];
}
export interface PeerBody {
  id: string;
  name: string;
  addresses: string[];
  allowedIPs: string[];
  tags: string[];
  online: boolean;
}
export interface NetmapBody {
  self: DeviceBody;
  peers: PeerBody[];
  version: number;
}
export interface Page<T> {
  entries: T[];
  nextCursor: string;
  hasMore: boolean;
}

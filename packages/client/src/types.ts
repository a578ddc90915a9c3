/**
 * Types of the client's calls that the contract does not name: query filters, create and
 * update inputs, the policy document, and the results that pair a body with its ETag.
 */
import type { DeviceBody, KeyBody, KeyState, Role, RouteState, Scope } from '@warren/contract';

/** Options every call accepts. */
export interface CallOptions {
  /**
   * `false`: throw this call's 429 at once instead of waiting it out (default: every call,
   * whatever its method, waits out a 429 up to `maxRetries` times; a 429 means nothing was done).
   */
  retry?: boolean;
  /** Cancels the call, including a wait for Retry-After. */
  signal?: AbortSignal;
}

/** Options of the iterators over a paged log (`connectionsAll`, `auditAll`, `events.all`, `deliveriesAll`). */
export interface FollowOptions extends CallOptions {
  /**
   * Keep polling for what arrives after the last page, until `signal` aborts (which ends the
   * loop without an error) or the loop breaks; without it the iterator ends at the last page.
   */
  follow?: boolean;
  /** The wait between polls while following, in ms (default 2000). */
  pollIntervalMs?: number;
}

export interface DeviceListQuery {
  /** A user id or login name. */
  user?: string;
  /** One tag or several; a device must carry all of them. */
  tag?: string | readonly string[];
  online?: boolean;
  /** `all` adds the detail fields (addresses, routes, clientVersion, …) to every record. */
  fields?: 'default' | 'all';
}

export interface DevicePageQuery extends DeviceListQuery {
  /** A part of the name, or an address. */
  q?: string;
  /** Devices per page (1–1000, default 100). */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

/** One page of devices in name order, and how many the filters select in all. */
export interface DevicePage {
  devices: DeviceBody[];
  nextCursor: string | null;
  hasMore: boolean;
  total: number;
}

export interface UserListQuery {
  role?: Role;
}

export interface CreateUserInput {
  loginName: string;
  displayName?: string;
  /** Default `member`. */
  role?: Role;
}

export interface UpdateUserInput {
  role?: Role;
  displayName?: string;
  /** `suspended` ends the user's sessions and disconnects their devices; `active` restores. */
  status?: 'active' | 'suspended';
}

export interface KeyListQuery {
  type?: 'auth' | 'api';
  state?: KeyState;
}

/** An auth key (enrollment): everything optional; `expiresIn` defaults to `90d`. */
export interface CreateAuthKeyInput {
  type?: 'auth';
  reusable?: boolean;
  ephemeral?: boolean;
  /** Devices it enrolls skip the network's device approval. */
  preApproved?: boolean;
  tags?: string[];
  /** User id or login name the enrolled devices belong to (default: the network's owner). */
  user?: string;
  description?: string;
  expiresIn?: string;
}

/** An API key (management). */
export interface CreateApiKeyInput {
  type: 'api';
  name: string;
  scopes: Scope[];
  expiresIn?: string;
  /** Requests per minute; only a key with scope `all` may set it. */
  rateLimit?: number;
  description?: string;
}

export type CreateKeyInput = CreateAuthKeyInput | CreateApiKeyInput;

/** The response to `POST /v1/keys`: the key with its secret, shown only this once. */
export type CreatedKey = KeyBody & { key: string };

export interface RouteListQuery {
  state?: RouteState;
  /** A device id. */
  device?: string;
}

export interface LogQuery {
  /** A duration (`15m`, `24h`, `7d`); default `1h`. Not together with `cursor`. */
  since?: string;
  /** The `nextCursor` of an earlier page: only what was recorded after it. */
  cursor?: string;
  /** 1–1000, default 100. */
  limit?: number;
}

export interface ConnectionLogQuery extends LogQuery {
  /** Entries that this device (its id or its name) is the source or destination of. */
  device?: string;
}

export interface AuditLogQuery extends LogQuery {
  /** Entries of calls made with this API key id. */
  key?: string;
  /** `'true'`: only calls that changed state (entries with an action). */
  changes?: 'true' | 'false';
}

export interface EventQuery extends LogQuery {
  /** Event types (`device.created`) or families (`device.*`); any of them matches. */
  type?: readonly string[];
}

/** One ACL rule of a policy. */
export interface PolicyRule {
  action: 'accept';
  src: string[];
  dst: string[];
  proto?: 'tcp' | 'udp' | 'icmp';
}

export interface PolicyTest {
  src: string;
  accept?: string[];
  deny?: string[];
}

/** The policy document (the JSON form of the stored HuJSON). */
export interface PolicyDocument {
  groups?: Record<string, string[]>;
  tagOwners?: Record<string, string[]>;
  hosts?: Record<string, string>;
  acls?: PolicyRule[];
  autoApprovers?: { routes?: Record<string, string[]> };
  tests?: PolicyTest[];
}

/** The stored policy as JSON, with the ETag to send back as `ifMatch`. */
export interface Policy {
  policy: PolicyDocument;
  etag: string;
}

/** The stored policy as the HuJSON text it was written in (comments and all). */
export interface PolicyText {
  text: string;
  etag: string;
}

/** One stored version of the policy (`GET /v1/acl/history`). */
export interface PolicyVersion {
  version: number;
  etag: string;
  created: string;
  /** Name of the API key that stored it (`warren init` for the initial policy). */
  createdBy: string | null;
}

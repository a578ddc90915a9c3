/**
 * The management resources: one small class per path of the contract, each a thin typed
 * wrapper over the transport. Ids are path-encoded; list calls return the records (the
 * envelope `{ "devices": [...] }` is unwrapped).
 */
import type {
  DeviceBody,
  KeyBody,
  MeBody,
  NetworkBody,
  PatchDeviceRequest,
  PatchNetworkRequest,
  RouteBody,
  SetSsoRequest,
  SsoConfigBody,
  UserBody,
} from '@warren/contract';
import type { Transport } from './http.js';
import type {
  CallOptions,
  CreatedKey,
  CreateKeyInput,
  CreateUserInput,
  DeviceListQuery,
  DevicePage,
  DevicePageQuery,
  KeyListQuery,
  RouteListQuery,
  UpdateUserInput,
  UserListQuery,
} from './types.js';

export const id = (value: string): string => encodeURIComponent(value);

/** Devices per page when a page is asked for without a limit (the server's default too). */
const DEVICE_PAGE = 100;

export class Devices {
  constructor(private readonly http: Transport) {}

  /** `GET /v1/devices`: every filter combines with AND; several tags must all match. */
  async list(query: DeviceListQuery = {}, options: CallOptions = {}): Promise<DeviceBody[]> {
    const tag = typeof query.tag === 'string' ? [query.tag] : query.tag;
    const body = await this.http.json<{ devices: DeviceBody[] }>('GET', '/v1/devices', {
      ...options,
      query: { user: query.user, tag, online: query.online, fields: query.fields },
    });
    return body.devices;
  }

  /**
   * `GET /v1/devices` a page at a time, in name order, searched by `q` (a part of the name or
   * an address): for lists too long to read whole. Pass `nextCursor` back for the next page.
   */
  page(query: DevicePageQuery = {}, options: CallOptions = {}): Promise<DevicePage> {
    const tag = typeof query.tag === 'string' ? [query.tag] : query.tag;
    return this.http.json<DevicePage>('GET', '/v1/devices', {
      ...options,
      query: {
        user: query.user,
        tag,
        online: query.online,
        fields: query.fields,
        q: query.q,
        limit: query.limit ?? DEVICE_PAGE,
        cursor: query.cursor,
      },
    });
  }

  /** `GET /v1/devices/{id}`: the detail record. */
  get(deviceId: string, options: CallOptions = {}): Promise<DeviceBody> {
    return this.http.json('GET', `/v1/devices/${id(deviceId)}`, options);
  }

  /** `DELETE /v1/devices/{id}`: revokes its credential and frees its addresses at once. */
  async delete(deviceId: string, options: CallOptions = {}): Promise<void> {
    await this.http.json('DELETE', `/v1/devices/${id(deviceId)}`, options);
  }

  /** `POST /v1/devices/{id}/tags`: replaces the device's tags (an empty list clears them). */
  setTags(deviceId: string, tags: readonly string[], options: CallOptions = {}): Promise<DeviceBody> {
    return this.http.json('POST', `/v1/devices/${id(deviceId)}/tags`, { ...options, body: { tags } });
  }

  /** `PATCH /v1/devices/{id}`: `keyExpiryDisabled` (true also lifts an expiry that happened). */
  update(deviceId: string, input: PatchDeviceRequest, options: CallOptions = {}): Promise<DeviceBody> {
    return this.http.json('PATCH', `/v1/devices/${id(deviceId)}`, { ...options, body: input });
  }

  /** `POST /v1/devices/{id}/approve`: lets a device waiting for approval into netmaps. */
  approve(deviceId: string, options: CallOptions = {}): Promise<DeviceBody> {
    return this.http.json('POST', `/v1/devices/${id(deviceId)}/approve`, options);
  }

  /** `POST /v1/devices/{id}/expire`: ends the device's login now; it must log in again. */
  expire(deviceId: string, options: CallOptions = {}): Promise<DeviceBody> {
    return this.http.json('POST', `/v1/devices/${id(deviceId)}/expire`, options);
  }
}

export class Users {
  constructor(private readonly http: Transport) {}

  async list(query: UserListQuery = {}, options: CallOptions = {}): Promise<UserBody[]> {
    const body = await this.http.json<{ users: UserBody[] }>('GET', '/v1/users', { ...options, query: { ...query } });
    return body.users;
  }

  /** `POST /v1/users` (403 `plan_limit` past the plan's seats; 409 `conflict` for a taken login name). */
  create(input: CreateUserInput, options: CallOptions = {}): Promise<UserBody> {
    return this.http.json('POST', '/v1/users', { ...options, body: input });
  }

  /** `PATCH /v1/users/{id}`: change the role (or display name). */
  update(userId: string, input: UpdateUserInput, options: CallOptions = {}): Promise<UserBody> {
    return this.http.json('PATCH', `/v1/users/${id(userId)}`, { ...options, body: input });
  }

  /** `DELETE /v1/users/{id}`: removes the user and their devices; keys stay. */
  async delete(userId: string, options: CallOptions = {}): Promise<void> {
    await this.http.json('DELETE', `/v1/users/${id(userId)}`, options);
  }
}

export class Keys {
  constructor(private readonly http: Transport) {}

  async list(query: KeyListQuery = {}, options: CallOptions = {}): Promise<KeyBody[]> {
    const body = await this.http.json<{ keys: KeyBody[] }>('GET', '/v1/keys', { ...options, query: { ...query } });
    return body.keys;
  }

  /** `POST /v1/keys`: an auth key by default, an API key with `type: 'api'`. The secret is in `key`, once. */
  create(input: CreateKeyInput = {}, options: CallOptions = {}): Promise<CreatedKey> {
    return this.http.json('POST', '/v1/keys', { ...options, body: input });
  }

  get(keyId: string, options: CallOptions = {}): Promise<KeyBody> {
    return this.http.json('GET', `/v1/keys/${id(keyId)}`, options);
  }

  /** `DELETE /v1/keys/{id}`: the key stops working at once; devices it enrolled stay. */
  async delete(keyId: string, options: CallOptions = {}): Promise<void> {
    await this.http.json('DELETE', `/v1/keys/${id(keyId)}`, options);
  }
}

export class Routes {
  constructor(private readonly http: Transport) {}

  async list(query: RouteListQuery = {}, options: CallOptions = {}): Promise<RouteBody[]> {
    const body = await this.http.json<{ routes: RouteBody[] }>('GET', '/v1/routes', {
      ...options,
      query: { ...query },
    });
    return body.routes;
  }

  /** `POST /v1/routes/{id}/approve`: pending or disabled → approved (409 `invalid_state` otherwise). */
  approve(routeId: string, options: CallOptions = {}): Promise<RouteBody> {
    return this.http.json('POST', `/v1/routes/${id(routeId)}/approve`, options);
  }

  /** `POST /v1/routes/{id}/disable`: approved → disabled (409 `invalid_state` otherwise). */
  disable(routeId: string, options: CallOptions = {}): Promise<RouteBody> {
    return this.http.json('POST', `/v1/routes/${id(routeId)}/disable`, options);
  }
}

export class NetworkInfo {
  constructor(private readonly http: Transport) {}

  /** `GET /v1/network`: the key's network with its plan, limits (null = unlimited) and usage. */
  get(options: CallOptions = {}): Promise<NetworkBody> {
    return this.http.json('GET', '/v1/network', options);
  }

  /**
   * `PATCH /v1/network`: the network's settings (`deviceApproval`, `nodeKeyExpiry`, `flowLogs`, `dns`,
   * `derp`); a field left out keeps its value, in `dns` and `derp` too. Needs scope `all`.
   */
  update(input: PatchNetworkRequest, options: CallOptions = {}): Promise<NetworkBody> {
    return this.http.json('PATCH', '/v1/network', { ...options, body: input });
  }

  /** `GET /v1/me`: the caller (signed-in user or API key), its scopes and a session's CSRF token. */
  me(options: CallOptions = {}): Promise<MeBody> {
    return this.http.json('GET', '/v1/me', options);
  }

  /** `GET /v1/network/sso`: the network's single sign-on settings (never the client secret). */
  sso(options: CallOptions = {}): Promise<SsoConfigBody> {
    return this.http.json('GET', '/v1/network/sso', options);
  }

  /** `PUT /v1/network/sso`: set the OpenID provider, and whether only it signs people in. */
  setSso(input: SetSsoRequest, options: CallOptions = {}): Promise<SsoConfigBody> {
    return this.http.json('PUT', '/v1/network/sso', { ...options, body: input });
  }
}

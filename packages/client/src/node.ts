/**
 * The node protocol as typed calls: what a device agent uses to enroll, report presence and
 * routes, follow its netmap and report connections. `register` keeps the node credential it
 * receives for every later call. Like every call of the client, a 429 is waited out and
 * retried (up to the transport's maxRetries), POSTs included.
 * An agent runs unattended, so every attempt has a timeout (30 s unless set): a server that
 * accepts a connection and never answers cannot stall it forever.
 */
import type {
  DeviceBody,
  HeartbeatRequest,
  NetmapBody,
  RegisterRequest,
  ReportedConnectionRequest,
} from '@warren/contract';
import { parseAnswer, Transport, type TransportOptions, toError } from './http.js';
import { applyNetmapDelta, isNetmapDelta, type NetmapDeltaBody } from './netmap-delta.js';
import type { CallOptions } from './types.js';

export interface RegisterResult {
  device: DeviceBody;
  /** The node credential (`wrn_node_…`); shown once, kept by the client. */
  nodeToken: string;
}

export interface HeartbeatResult {
  online: boolean;
  netmapVersion: number;
}

/** How long one attempt may take unless `timeoutMs` says otherwise. */
export const NODE_TIMEOUT_MS = 30_000;

export interface NodeClientOptions extends Omit<TransportOptions, 'token'> {
  /** A node credential from an earlier registration (a restarted agent). */
  nodeToken?: string;
  /** Gives up on one attempt after this many ms (default 30 000). */
  timeoutMs?: number;
}

export class NodeClient {
  private readonly http: Transport;
  // A private field behind the accessors, so printing a NodeClient never shows the credential.
  #nodeToken: string | undefined;
  /** The node credential in use (set by `register`). */
  get nodeToken(): string | undefined {
    return this.#nodeToken;
  }
  set nodeToken(token: string | undefined) {
    this.#nodeToken = token;
  }
  /** ETag of the last netmap received; pass it to `netmap()` to get `undefined` when unchanged. */
  netmapETag: string | undefined;

  constructor(transport: Transport | NodeClientOptions) {
    if (transport instanceof Transport) {
      this.http = transport;
    } else {
      this.http = new Transport({ ...transport, token: undefined, timeoutMs: transport.timeoutMs ?? NODE_TIMEOUT_MS });
      this.nodeToken = transport.nodeToken;
    }
  }

  private token(): string {
    if (!this.nodeToken) throw new Error('NodeClient: register first (no node credential yet)');
    return this.nodeToken;
  }

  /** `POST /v1/node/register` with an auth key; a known nodeKey re-enrolls its device. */
  async register(authKey: string, body: RegisterRequest, options: CallOptions = {}): Promise<RegisterResult> {
    const result = await this.http.json<RegisterResult>('POST', '/v1/node/register', {
      ...options,
      body,
      token: authKey,
    });
    this.nodeToken = result.nodeToken;
    return result;
  }

  /** `POST /v1/node/heartbeat`: online now; `advertiseRoutes` (when given) replaces the advertised set. */
  heartbeat(body: HeartbeatRequest = {}, options: CallOptions = {}): Promise<HeartbeatResult> {
    return this.http.json('POST', '/v1/node/heartbeat', { ...options, body, token: this.token() });
  }

  /** `POST /v1/node/disconnect`: offline at once. */
  async disconnect(options: CallOptions = {}): Promise<void> {
    await this.http.json('POST', '/v1/node/disconnect', { ...options, token: this.token() });
  }

  /**
   * `GET /v1/node/netmap`: the peers this device may reach or be reached by. With
   * `ifNoneMatch` (an ETag from an earlier answer) it resolves to `undefined` when unchanged.
   */
  async netmap(ifNoneMatch?: string, options: CallOptions = {}): Promise<NetmapBody | undefined> {
    const body = await this.fetchNetmap('/v1/node/netmap', ifNoneMatch, options);
    return body as NetmapBody | undefined;
  }

  /**
   * The current netmap given the one held: asks for a delta since `held` (`?delta=true`) and
   * applies it, or takes the full map when the server sends one. Resolves to `undefined` when
   * unchanged; without `held`, fetches the full map.
   */
  async followNetmap(held: NetmapBody | undefined, options: CallOptions = {}): Promise<NetmapBody | undefined> {
    if (!held) return this.netmap(undefined, options);
    const body = await this.fetchNetmap('/v1/node/netmap?delta=true', `"${held.version}"`, options);
    if (body === undefined || !isNetmapDelta(body)) return body;
    return applyNetmapDelta(held, body);
  }

  private async fetchNetmap(
    path: string,
    ifNoneMatch: string | undefined,
    options: CallOptions,
  ): Promise<NetmapBody | NetmapDeltaBody | undefined> {
    const response = await this.http.raw('GET', path, {
      ...options,
      token: this.token(),
      headers: ifNoneMatch ? { 'if-none-match': ifNoneMatch } : {},
    });
    if (response.status === 304) return undefined;
    if (response.status >= 400) throw toError(response);
    this.netmapETag = response.headers.get('etag') ?? undefined;
    return parseAnswer<NetmapBody | NetmapDeltaBody>(response);
  }

  /** `POST /v1/node/connections`: up to 1000 entries, accepted (202) as a whole or refused. */
  async reportConnections(entries: ReportedConnectionRequest[], options: CallOptions = {}): Promise<void> {
    await this.http.json('POST', '/v1/node/connections', { ...options, body: { entries }, token: this.token() });
  }
}

/**
 * `new Warren({ url, apiKey })`: the management API as typed calls. Every non-2xx answer is
 * thrown as a WarrenError (status, code, detail, errors[]); a 429 is waited out and retried
 * up to `maxRetries` times, whatever the method (Warren refuses it before doing anything).
 */
import { Acl } from './acl.js';
import { Events } from './events.js';
import { Transport } from './http.js';
import { Logs } from './log-pages.js';
import { Devices, Keys, NetworkInfo, Routes, Users } from './resources.js';
import { Webhooks } from './webhooks.js';

export interface WarrenOptions {
  /** Base URL of the server, e.g. http://127.0.0.1:8080 (without /v1); default: `WARREN_URL`. */
  url?: string;
  /** An API key: `wrn_api_…`; default: `WARREN_API_KEY`. */
  apiKey?: string;
  /**
   * Console mode: authenticate with the browser's session cookie instead of an API key (same
   * origin only); set `csrfToken` from `network.me()` before any unsafe call.
   */
  session?: { csrfToken?: string };
  /** How many times one call waits out a 429 and retries (default 3; 0 turns retrying off). */
  maxRetries?: number;
  /** Upper bound of one wait in seconds, whatever Retry-After says (default 60). */
  maxRetryWait?: number;
  /**
   * Gives up on one attempt (request and answer) after this many ms, rejecting with a
   * `TimeoutError` DOMException (default: no timeout; a `signal` per call cancels too).
   */
  timeoutMs?: number;
  /** Put before the client's own `warren-typescript/<version>` in the User-Agent header. */
  userAgent?: string;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

export class Warren {
  readonly devices: Devices;
  readonly users: Users;
  readonly keys: Keys;
  readonly acl: Acl;
  readonly routes: Routes;
  readonly network: NetworkInfo;
  readonly logs: Logs;
  readonly events: Events;
  readonly webhooks: Webhooks;
  /** The transport, for calls this client does not wrap. */
  readonly http: Transport;

  constructor(options: WarrenOptions = {}) {
    const url = options.url ?? environment('WARREN_URL');
    const apiKey = options.apiKey ?? environment('WARREN_API_KEY');
    if (!url) throw new TypeError('Warren: url is required (e.g. http://127.0.0.1:8080), or set WARREN_URL');
    if (!apiKey && !options.session)
      throw new TypeError('Warren: apiKey is required (wrn_api_…), or set WARREN_API_KEY');
    this.http = new Transport({
      url,
      token: options.session ? undefined : apiKey,
      session: options.session,
      maxRetries: options.maxRetries,
      maxRetryWait: options.maxRetryWait,
      timeoutMs: options.timeoutMs,
      userAgent: options.userAgent,
      fetch: options.fetch,
    });
    this.devices = new Devices(this.http);
    this.users = new Users(this.http);
    this.keys = new Keys(this.http);
    this.acl = new Acl(this.http);
    this.routes = new Routes(this.http);
    this.network = new NetworkInfo(this.http);
    this.logs = new Logs(this.http);
    this.events = new Events(this.http);
    this.webhooks = new Webhooks(this.http);
  }
}

/** A variable of the process environment, where there is one (Node, Deno, Bun; not a browser). */
function environment(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.[name] || undefined;
}

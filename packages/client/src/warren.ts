/**
 * `new Warren({ url, apiKey })`: the management API as typed calls. Every non-2xx answer is
 * thrown as a WarrenError (status, code, detail, errors[]); a 429 is waited out and retried
 * for idempotent calls (GET, PUT, DELETE, and policy validation) up to `maxRetries` times.
 */
import { Acl } from './acl.js';
import { Transport } from './http.js';
import { Logs } from './log-pages.js';
import { Devices, Keys, NetworkInfo, Routes, Users } from './resources.js';

export interface WarrenOptions {
  /** Base URL of the server, e.g. http://127.0.0.1:8080 (without /v1). */
  url: string;
  /** An API key: `wrn_api_…`. */
  apiKey: string;
  /** How many times one call waits out a 429 and retries (default 3; 0 turns retrying off). */
  maxRetries?: number;
  /** Upper bound of one wait in seconds, whatever Retry-After says (default 60). */
  maxRetryWait?: number;
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
  /** The transport, for calls this client does not wrap. */
  readonly http: Transport;

  constructor(options: WarrenOptions) {
    if (!options.url) throw new TypeError('Warren: url is required (e.g. http://127.0.0.1:8080)');
    if (!options.apiKey) throw new TypeError('Warren: apiKey is required (wrn_api_…)');
    this.http = new Transport({
      url: options.url,
      token: options.apiKey,
      maxRetries: options.maxRetries,
      maxRetryWait: options.maxRetryWait,
      fetch: options.fetch,
    });
    this.devices = new Devices(this.http);
    this.users = new Users(this.http);
    this.keys = new Keys(this.http);
    this.acl = new Acl(this.http);
    this.routes = new Routes(this.http);
    this.network = new NetworkInfo(this.http);
    this.logs = new Logs(this.http);
  }
}

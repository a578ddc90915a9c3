/**
 * The client's transport: global fetch, bearer auth, JSON in and out, problem responses
 * raised as WarrenError, a bounded wait-and-retry on 429, and an optional per-attempt timeout.
 *
 * A 429 is retried whatever the method: Warren's rate limiter refuses before any handler runs,
 * so a refused POST or PATCH did nothing and sending it again cannot do it twice. Nothing else
 * is retried: after a 5xx or a dropped connection the change may have been made.
 */
import type { PolicyProblem } from '@warren/contract';
import { VERSION } from './version.js';

export class WarrenError extends Error {
  /** The problem's short title (`Not Found`); empty when the answer was not a problem document. */
  readonly title: string;
  /** The scope that was needed (`insufficient_scope`). */
  readonly scope?: string;
  /** The first bad entry of a refused batch of connection reports. */
  readonly index?: number;

  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors: PolicyProblem[] = [],
    readonly requestId?: string,
    readonly retryAfter?: number,
    extra: { title?: string; scope?: string; index?: number } = {},
  ) {
    super(`${code}: ${detail}`);
    this.name = 'WarrenError';
    this.title = extra.title ?? '';
    if (extra.scope !== undefined) this.scope = extra.scope;
    if (extra.index !== undefined) this.index = extra.index;
  }
}

export interface TransportOptions {
  /** Base URL of the server, e.g. http://127.0.0.1:8080 (without /v1). */
  url: string;
  /** API key (management) or node credential (node protocol). */
  token?: string;
  /** How many times to wait out a 429 and retry (default 3; 0 turns it off). */
  maxRetries?: number;
  /** Upper bound of one wait in seconds (default 60). */
  maxRetryWait?: number;
  /**
   * Gives up on one attempt (request and response body) after this many ms, rejecting with a
   * `TimeoutError` DOMException (default: no timeout).
   */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Put before the client's own `warren-typescript/<version>` in the User-Agent header. */
  userAgent?: string;
  /**
   * Console mode (same origin, in a browser): the session cookie authenticates, so no token is
   * held; every unsafe method carries the session's CSRF token.
   */
  session?: { csrfToken?: string };
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | readonly string[] | undefined>;
  body?: unknown;
  /** Raw text body with its content type (policies). */
  text?: { body: string; contentType: string };
  headers?: Record<string, string>;
  /** `false`: this call's 429 is thrown at once instead of waited out (default: retried). */
  retry?: boolean;
  token?: string;
  /** Cancels the call, including a wait for Retry-After. */
  signal?: AbortSignal;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export class Transport {
  /** The server's URL, without a trailing slash or `/v1`: every path starts with `/v1`. */
  readonly base: string;
  // A private field, so printing a client (console.log, util.inspect, JSON.stringify) never
  // shows the token it holds.
  readonly #options: TransportOptions;
  readonly #userAgent: string;

  constructor(options: TransportOptions) {
    this.#options = options;
    this.base = baseOf(options.url);
    const own = `warren-typescript/${VERSION}`;
    this.#userAgent = options.userAgent ? `${options.userAgent} ${own}` : own;
  }

  withToken(token: string): Transport {
    return new Transport({ ...this.#options, token });
  }

  async raw(method: string, path: string, options: RequestOptions = {}): Promise<RawResponse> {
    const url = new URL(`${this.base}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const item of value) url.searchParams.append(name, String(item));
      else url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    // Not in a browser's console session: there the browser names itself, and a header of the
    // page's own could make a cross-origin call need a preflight.
    if (!this.#options.session) headers['user-agent'] = this.#userAgent;
    const token = options.token ?? this.#options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    const session = this.#options.session;
    if (session?.csrfToken && !SAFE.has(method)) headers['x-csrf-token'] = session.csrfToken;
    // A string, so every attempt sends the same body (a stream could be read only once).
    let body: string | undefined;
    if (options.text) {
      body = options.text.body;
      headers['content-type'] = options.text.contentType;
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const doFetch = this.#options.fetch ?? fetch;
    const retries = options.retry === false ? 0 : (this.#options.maxRetries ?? 3);
    for (let attempt = 0; ; attempt++) {
      const init: RequestInit = { method, headers, body };
      if (this.#options.session) init.credentials = 'same-origin';
      const { response, text } = await this.attempt(doFetch, url, init, options.signal);
      if (response.status === 429 && attempt < retries) {
        const wait = Math.min(
          Math.max(Number(response.headers.get('retry-after')) || 1, 1),
          this.#options.maxRetryWait ?? 60,
        );
        await sleep(wait * 1000, options.signal);
        continue;
      }
      return { status: response.status, headers: response.headers, text };
    }
  }

  /**
   * One fetch and its body under the caller's signal and the timeout. Each attempt gets its own
   * controller, and the listener it puts on the caller's signal is removed when the attempt
   * ends: fetch itself would leave one listener per request on a long-lived signal until
   * garbage collection, which a fleet of agents sharing one signal turns into thousands.
   */
  private async attempt(
    doFetch: typeof fetch,
    url: URL,
    init: RequestInit,
    signal: AbortSignal | undefined,
  ): Promise<{ response: Response; text: string }> {
    signal?.throwIfAborted();
    const { timeoutMs } = this.#options;
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = timeoutMs
      ? setTimeout(
          () =>
            controller.abort(new DOMException(`no answer from ${url.origin} within ${timeoutMs} ms`, 'TimeoutError')),
          timeoutMs,
        )
      : undefined;
    try {
      const response = await doFetch(url, { ...init, signal: controller.signal });
      return { response, text: await response.text() };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** A JSON call; non-2xx (and 304 unless allowed) becomes a WarrenError. */
  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.raw(method, path, options);
    if (response.status >= 400) throw toError(response);
    if (response.status === 204 || response.text === '') return undefined as T;
    return parseAnswer<T>(response);
  }
}

/**
 * The JSON of a 2xx answer. One that is not JSON comes from something in front of the server (a
 * captive portal, a proxy's page): the caller gets the client's one error type, not a SyntaxError.
 */
export function parseAnswer<T>(response: RawResponse): T {
  try {
    return JSON.parse(response.text) as T;
  } catch {
    throw new WarrenError(
      response.status,
      'invalid_response',
      `expected JSON, got ${JSON.stringify(response.text.slice(0, 80))}`,
    );
  }
}

/**
 * The server's URL as every path is appended to it: no trailing slash, and no `/v1` (a copied
 * API base means the same server). A user or password in it is refused: the key is the
 * credential, and fetch would refuse such a URL with an error that quotes it.
 */
function baseOf(url: string): string {
  const base = url.trim().replace(/\/+$/, '').replace(/\/v1$/, '').replace(/\/+$/, '');
  let parsed: URL | undefined;
  try {
    parsed = new URL(base);
  } catch {
    // Relative (a console in the page's own origin): fetch resolves it.
    return base;
  }
  if (parsed.username || parsed.password)
    throw new TypeError('Warren: the server URL must not contain a user or password; the API key is the credential');
  return base;
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function toError(response: RawResponse): WarrenError {
  let problem: {
    code?: unknown;
    detail?: unknown;
    title?: unknown;
    errors?: unknown;
    requestId?: unknown;
    scope?: unknown;
    index?: unknown;
  } = {};
  try {
    const parsed: unknown = JSON.parse(response.text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) problem = parsed;
  } catch {
    // not a problem body (a proxy's error page, say)
  }
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const retryAfter = Number(response.headers.get('retry-after')) || undefined;
  return new WarrenError(
    response.status,
    text(problem.code) ?? `http_${response.status}`,
    text(problem.detail) ?? (response.text.trim().slice(0, 200) || `HTTP ${response.status}`),
    Array.isArray(problem.errors) ? (problem.errors as PolicyProblem[]) : [],
    text(problem.requestId) ?? response.headers.get('x-request-id') ?? undefined,
    retryAfter,
    {
      title: text(problem.title),
      scope: text(problem.scope),
      index: typeof problem.index === 'number' ? problem.index : undefined,
    },
  );
}

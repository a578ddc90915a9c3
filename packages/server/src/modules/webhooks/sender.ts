/**
 * One delivery attempt: a POST with a deadline, to a target the guard allows (target-guard.ts:
 * the URL itself, then every address its host resolves to). Only the status and Retry-After
 * matter; the body of the answer is read and dropped (at most 64 KiB) so the connection can be
 * reused.
 */
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, targetRefusal } from './target-guard.js';

export interface Attempt {
  status: number | null;
  /** Seconds the endpoint asked to wait (Retry-After), when it did. */
  retryAfter?: number;
  error?: string;
}

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 4 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 4 }),
};

export function post(
  target: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowPrivate: boolean },
): Promise<Attempt> {
  const url = new URL(target);
  const refused = targetRefusal(url, options.allowPrivate);
  if (refused) return Promise.resolve({ status: null, error: refused });
  return new Promise((resolve) => {
    const secure = url.protocol === 'https:';
    const request = (secure ? https : http).request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body), 'user-agent': 'Warren-Webhooks/1' },
        agent: secure ? agents.https : agents.http,
        lookup: guardedLookup(options.allowPrivate),
      },
      (response) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > 65_536) response.destroy();
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? null, retryAfter: retryAfter(response.headers['retry-after']) }),
        );
        response.on('close', () => resolve({ status: response.statusCode ?? null }));
      },
    );
    const timer = setTimeout(
      () => request.destroy(new Error(`no answer within ${options.timeoutMs / 1000} s`)),
      options.timeoutMs,
    );
    request.on('error', (error) => resolve({ status: null, error: error.message.slice(0, 300) }));
    request.on('close', () => clearTimeout(timer));
    request.end(body);
  });
}

/** Retry-After as seconds: an integer, or an HTTP date. */
function retryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

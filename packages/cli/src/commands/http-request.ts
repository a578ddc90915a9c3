/**
 * The client's requests over node:http (node:https for https URLs), for the command only.
 * Node's fetch loads undici with HTTP/2, TLS, zlib and web streams on its first call: about
 * 40 MiB of memory and a good part of the start-up of a command that makes one request. The
 * client reads three things of a response (status, one header, the text), so this answers
 * those and nothing more; the client library itself keeps the platform's fetch.
 */
import type { IncomingHttpHeaders } from 'node:http';

type Answer = Pick<Response, 'status' | 'ok' | 'text'> & { headers: Pick<Headers, 'get'> };

/** Connections kept open between the requests of one command (paging, following a log). */
const agents = new Map<string, import('node:http').Agent>();

async function transport(protocol: string) {
  const module = protocol === 'https:' ? await import('node:https') : await import('node:http');
  let agent = agents.get(protocol);
  if (!agent) {
    agent = new module.Agent({ keepAlive: true }); // idle sockets do not keep the process alive
    agents.set(protocol, agent);
  }
  return { request: module.request, agent };
}

function headerOf(headers: IncomingHttpHeaders) {
  return {
    get(name: string): string | null {
      const value = headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/** A fetch for the client: `init` as the client builds it (method, plain headers, a string body, a signal). */
export const httpRequest = (async (input: string | URL, init: RequestInit = {}): Promise<Answer> => {
  const url = new URL(String(input));
  const { request, agent } = await transport(url.protocol);
  init.signal?.throwIfAborted();
  return new Promise<Answer>((resolve, reject) => {
    const req = request(url, {
      method: init.method ?? 'GET',
      headers: init.headers as Record<string, string>,
      agent,
      ...(init.signal ? { signal: init.signal } : {}),
    });
    req.on('error', (error) => reject(init.signal?.aborted ? init.signal.reason : error));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status, ok: status >= 200 && status < 300, headers: headerOf(res.headers), text: async () => text });
      });
    });
    req.end(typeof init.body === 'string' ? init.body : undefined);
  });
}) as unknown as typeof fetch;

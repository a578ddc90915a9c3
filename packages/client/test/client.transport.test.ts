/**
 * What the transport does whatever the server: the User-Agent it sends, the base URL forms it
 * takes, what it throws for answers that are not the API's, its timeout, and that printing a
 * client never shows its credential. A plain node:http server answers as a test scripts it.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NodeClient, VERSION, Warren, WarrenError } from '../src/index.js';

interface Answer {
  status: number;
  type?: string;
  body: string;
  /** Never answer (for the timeout). */
  hang?: boolean;
}

describe('Warren client: transport', () => {
  let server: Server;
  let url: string;
  let answer: Answer = { status: 200, body: '{}' };
  const seen: IncomingMessage[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push(request);
      if (answer.hang) return;
      response.writeHead(answer.status, { 'content-type': answer.type ?? 'application/json' });
      response.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  async function thrown(promise: Promise<unknown>): Promise<unknown> {
    try {
      await promise;
    } catch (error) {
      return error;
    }
    throw new Error('expected the call to fail');
  }

  it('names itself and its version in the User-Agent, after the caller’s own product', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
    answer = { status: 200, body: '{}' };
    seen.length = 0;
    await new Warren({ url, apiKey: 'wrn_api_x' }).network.get();
    await new Warren({ url, apiKey: 'wrn_api_x', userAgent: 'deploy-bot/2.1' }).network.get();
    await new NodeClient({ url }).register('wrn_auth_x', { hostname: 'h', os: 'linux', nodeKey: 'k' });
    expect(seen.map((r) => r.headers['user-agent'])).toEqual([
      `warren-typescript/${VERSION}`,
      `deploy-bot/2.1 warren-typescript/${VERSION}`,
      `warren-typescript/${VERSION}`,
    ]);
  });

  it('takes the server URL with or without a trailing slash or /v1, under a path prefix too', async () => {
    answer = { status: 200, body: '{}' };
    seen.length = 0;
    for (const base of [url, `${url}/`, `${url}/v1`, `${url}/v1/`, `${url}/warren`, `${url}/warren/v1/`]) {
      await new Warren({ url: base, apiKey: 'wrn_api_x' }).network.get();
    }
    expect(seen.map((r) => r.url)).toEqual([
      '/v1/network',
      '/v1/network',
      '/v1/network',
      '/v1/network',
      '/warren/v1/network',
      '/warren/v1/network',
    ]);
  });

  it('what the constructor is given wins over WARREN_URL and WARREN_API_KEY', async () => {
    vi.stubEnv('WARREN_URL', 'http://127.0.0.1:9');
    vi.stubEnv('WARREN_API_KEY', 'wrn_api_from_env');
    try {
      answer = { status: 200, body: '{}' };
      seen.length = 0;
      await new Warren({ url, apiKey: 'wrn_api_given' }).network.get();
      expect(seen.map((r) => r.headers.authorization)).toEqual(['Bearer wrn_api_given']);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('a proxy’s HTML error page is a WarrenError with the status, not a parse error', async () => {
    answer = { status: 502, type: 'text/html', body: '<html><body><h1>502 Bad Gateway</h1></body></html>' };
    const error = await thrown(new Warren({ url, apiKey: 'wrn_api_x' }).devices.list());
    expect(error).toBeInstanceOf(WarrenError);
    expect(error).toMatchObject({ status: 502, code: 'http_502', errors: [] });
    expect((error as WarrenError).detail).toContain('502 Bad Gateway');
  });

  it('a 2xx that is not JSON is a WarrenError invalid_response, not a SyntaxError', async () => {
    answer = { status: 200, type: 'text/html', body: '<html>captive portal</html>' };
    const error = await thrown(new Warren({ url, apiKey: 'wrn_api_x' }).network.get());
    expect(error).toBeInstanceOf(WarrenError);
    expect(error).toMatchObject({ status: 200, code: 'invalid_response' });
    const netmap = await thrown(new NodeClient({ url, nodeToken: 'wrn_node_x' }).netmap());
    expect(netmap).toMatchObject({ status: 200, code: 'invalid_response' });
  });

  it('an error body that is JSON but no problem (null, a list) still gives a WarrenError', async () => {
    for (const body of ['null', '[1]', '"oops"']) {
      answer = { status: 503, body };
      const error = await thrown(new Warren({ url, apiKey: 'wrn_api_x' }).network.get());
      expect(error).toMatchObject({ status: 503, code: 'http_503' });
    }
  });

  it('carries every field of the problem: title, scope and index beside code, detail and errors', async () => {
    answer = {
      status: 403,
      type: 'application/problem+json',
      body: JSON.stringify({
        type: 'about:blank',
        title: 'Forbidden',
        status: 403,
        code: 'insufficient_scope',
        detail: 'needs keys',
        requestId: 'req_1',
        scope: 'keys',
      }),
    };
    const error = await thrown(new Warren({ url, apiKey: 'wrn_api_x' }).keys.list());
    expect(error).toMatchObject({ status: 403, code: 'insufficient_scope', title: 'Forbidden', scope: 'keys' });
    expect(error).toMatchObject({ requestId: 'req_1' });
  });

  it('timeoutMs gives up on a server that never answers', async () => {
    answer = { status: 200, body: '', hang: true };
    const error = await thrown(new Warren({ url, apiKey: 'wrn_api_x', timeoutMs: 100 }).network.get());
    expect(error).toMatchObject({ name: 'TimeoutError' });
  });

  it('printing a client or a node client never shows the key or the node credential', () => {
    const warren = new Warren({ url, apiKey: 'wrn_api_leakcheck' });
    const node = new NodeClient({ url, nodeToken: 'wrn_node_leakcheck' });
    for (const text of [inspect(warren, { depth: 10, showHidden: true }), JSON.stringify(warren)]) {
      expect(text).not.toContain('leakcheck');
    }
    for (const text of [inspect(node, { depth: 10, showHidden: true }), JSON.stringify(node)]) {
      expect(text).not.toContain('leakcheck');
    }
    expect(node.nodeToken).toBe('wrn_node_leakcheck');
  });

  it('refuses a server URL with a user or password without repeating it', () => {
    let error: unknown;
    try {
      new Warren({ url: 'http://ops:hunter2@127.0.0.1:9', apiKey: 'wrn_api_x' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error)).not.toContain('hunter2');
  });
});

/** Enrolls devices over the node protocol, as an agent would, so the client commands have something to show. */
import { randomBytes } from 'node:crypto';

export interface Enrolled {
  id: string;
  name: string;
  nodeToken: string;
}

async function post(url: string, token: string, body: unknown): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Creates an auth key with `tags` and enrolls one device per hostname; `offline` ones disconnect at once. */
export async function enroll(
  server: { url: string; apiKey: string },
  hostnames: string[],
  options: { tags?: string[]; offline?: boolean; advertiseRoutes?: string[]; user?: string } = {},
): Promise<Enrolled[]> {
  const key = await post(`${server.url}/v1/keys`, server.apiKey, {
    reusable: true,
    tags: options.tags ?? [],
    ...(options.user ? { user: options.user } : {}),
  });
  const enrolled: Enrolled[] = [];
  for (const hostname of hostnames) {
    const registered = await post(`${server.url}/v1/node/register`, key.key, {
      hostname,
      os: 'linux',
      nodeKey: `nodekey:${randomBytes(32).toString('hex')}`,
      clientVersion: '1.2.3',
      ...(options.advertiseRoutes ? { advertiseRoutes: options.advertiseRoutes } : {}),
    });
    if (options.offline) await post(`${server.url}/v1/node/disconnect`, registered.nodeToken, undefined);
    enrolled.push({ id: registered.device.id, name: registered.device.name, nodeToken: registered.nodeToken });
  }
  return enrolled;
}

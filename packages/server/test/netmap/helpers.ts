/** Helpers of the netmap suites: a small network of users and devices, and netmap reads. */
import { expect } from 'vitest';
import { createAuthKey, type EnrolledDevice, enroll } from '../devices/helpers.js';
import { json, type TestServer } from '../harness.js';

export async function createUser(server: TestServer, loginName: string, role = 'member'): Promise<string> {
  const res = await server.call('POST', '/v1/users', { body: { loginName, role } });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.id;
}

export interface NetmapRead {
  status: number;
  etag: string | null;
  body: any;
}

export async function netmap(server: TestServer, token: string, ifNoneMatch?: string): Promise<NetmapRead> {
  const res = await server.call('GET', '/v1/node/netmap', {
    key: token,
    headers: ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch },
  });
  const text = await res.text();
  return { status: res.status, etag: res.headers.get('etag'), body: text ? JSON.parse(text) : null };
}

/** A device of the test network, by name, with its credential. */
export type Devices = Record<string, EnrolledDevice>;

/** Enrolls one device per entry: name → auth key options (user login, tags, routes). */
export async function enrollAll(
  server: TestServer,
  spec: Record<string, { user?: string; tags?: string[]; advertiseRoutes?: string[] }>,
): Promise<Devices> {
  const out: Devices = {};
  for (const [name, s] of Object.entries(spec)) {
    const key = await createAuthKey(server, { user: s.user, tags: s.tags });
    out[name] = await enroll(server, key.key, {
      hostname: name,
      ...(s.advertiseRoutes ? { advertiseRoutes: s.advertiseRoutes } : {}),
    });
    expect(out[name].device.name).toBe(name);
  }
  return out;
}

/** The names of a device's peers, sorted. */
export async function peerNames(server: TestServer, device: EnrolledDevice): Promise<string[]> {
  const read = await netmap(server, device.nodeToken);
  expect(read.status, JSON.stringify(read.body)).toBe(200);
  return read.body.peers.map((p: any) => p.name).sort();
}

/** Every device's netmap version, by name. */
export async function versions(server: TestServer, devices: Devices): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, d] of Object.entries(devices)) {
    const read = await netmap(server, d.nodeToken);
    expect(read.status).toBe(200);
    out[name] = read.body.version;
  }
  return out;
}

/** Names whose version changed between two reads. */
export function bumped(before: Record<string, number>, after: Record<string, number>): string[] {
  return Object.keys(after)
    .filter((name) => after[name] !== before[name])
    .sort();
}

/**
 * Devices for connection-log tests, inserted straight into the database with a node
 * credential (the log does not depend on how devices enroll), and a reporter that posts
 * batches with that credential.
 */

import { newId } from '../../src/lib/ids.js';
import { generateSecret, hashSecret } from '../../src/lib/secrets.js';
import { deviceRow } from '../devices/helpers.js';
import type { TestServer } from '../harness.js';

export interface TestDevice {
  id: string;
  name: string;
  token: string;
  networkId: string;
  addrIndex: number;
  ipv4: string;
  ipv6: string;
}

/** Where address index n lives: offset n of the ranges, counting only .1–.254 of each /24. */
export function offsetOf(addrIndex: number): number {
  const n = addrIndex - 1;
  return Math.floor(n / 254) * 256 + (n % 254) + 1;
}

export function ipv4Of(addrIndex: number): string {
  const offset = offsetOf(addrIndex);
  return `100.${64 + Math.floor(offset / 65536)}.${Math.floor(offset / 256) % 256}.${offset % 256}`;
}

export function ipv6Of(addrIndex: number): string {
  const offset = offsetOf(addrIndex);
  const high = Math.floor(offset / 65536);
  return `fd7a:115c:a1e0::${high ? `${high.toString(16)}:` : ''}${(offset % 65536).toString(16)}`;
}

export async function addDevice(server: TestServer, networkId = server.networkId): Promise<TestDevice> {
  const db = server.database.storage.db;
  const token = generateSecret('node');
  const id = newId('device');
  return db.transaction().execute(async (trx) => {
    const network = await trx
      .selectFrom('networks')
      .select('next_addr_index')
      .where('id', '=', networkId)
      .executeTakeFirstOrThrow();
    const addrIndex = Number(network.next_addr_index);
    await trx
      .updateTable('networks')
      .set({ next_addr_index: addrIndex + 1 })
      .where('id', '=', networkId)
      .execute();
    const now = server.clock.now();
    const name = `host-${id.slice(4, 10)}`;
    await trx
      .insertInto('devices')
      .values(
        deviceRow({
          id,
          networkId,
          name,
          addrIndex,
          nodeTokenHash: hashSecret(token),
          now,
          nodeKey: `nodekey:${hashSecret(token)}`,
          clientVersion: '1.0.0',
        }),
      )
      .execute();
    return { id, name, token, networkId, addrIndex, ipv4: ipv4Of(addrIndex), ipv6: ipv6Of(addrIndex) };
  });
}

export interface Reported {
  start: string;
  end: string;
  proto: string;
  src: { deviceId?: string | null; addr: string };
  dst: { deviceId?: string | null; addr: string };
  txBytes: number;
  rxBytes: number;
  txPackets: number;
  rxPackets: number;
}

let serial = 0;

/** A plausible entry from `from` to `to` (a device, or any address with a port). */
export function entry(from: TestDevice, to: TestDevice | string, overrides: Partial<Reported> = {}): Reported {
  serial++;
  const start = Date.UTC(2026, 10, 22, 10, 0, 0) + serial * 1000;
  return {
    start: new Date(start).toISOString(),
    end: new Date(start + 5000).toISOString(),
    proto: 'tcp',
    src: { addr: `${from.ipv4}:${40000 + (serial % 20000)}` },
    dst: { addr: typeof to === 'string' ? to : `${to.ipv4}:443` },
    txBytes: serial,
    rxBytes: serial * 10,
    txPackets: serial % 100,
    rxPackets: (serial * 3) % 100,
    ...overrides,
  };
}

export function report(server: TestServer, device: TestDevice, entries: unknown[]): Promise<Response> {
  return server.call('POST', '/v1/node/connections', { key: device.token, body: { entries } });
}

export interface Page<T = any> {
  entries: T[];
  nextCursor: string;
  hasMore: boolean;
}

export async function page(server: TestServer, query: Record<string, string | number>, key?: string): Promise<Page> {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const response = await server.call('GET', `/v1/logs/connections?${search}`, { key });
  const body = await response.json();
  if (response.status !== 200) throw new Error(`GET /v1/logs/connections → ${response.status} ${JSON.stringify(body)}`);
  return body as Page;
}

/** Every entry from `query` on, following cursors until hasMore is false. */
export async function readAll(
  server: TestServer,
  query: Record<string, string | number>,
  key?: string,
): Promise<{ entries: any[]; cursor: string; pages: number }> {
  const entries: any[] = [];
  let current = await page(server, query, key);
  let pages = 1;
  const { since: _since, ...rest } = query;
  for (;;) {
    entries.push(...current.entries);
    if (!current.hasMore) return { entries, cursor: current.nextCursor, pages };
    current = await page(server, { ...rest, cursor: current.nextCursor }, key);
    pages++;
  }
}

/** API key of the test network with the given scopes. */
export async function apiKey(server: TestServer, scopes: string[]): Promise<string> {
  const response = await server.call('POST', '/v1/keys', {
    body: { type: 'api', name: `k-${scopes.join('-')}-${serial++}`, scopes, expiresIn: '1d' },
  });
  const body = (await response.json()) as { key: string };
  if (response.status !== 201) throw new Error(`POST /v1/keys → ${response.status} ${JSON.stringify(body)}`);
  return body.key;
}

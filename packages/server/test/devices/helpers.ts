/** Helpers shared by the device, node and route suites: auth keys, enrollment, node calls. */
import { randomBytes } from 'node:crypto';
import type { Insertable } from 'kysely';
import { expect } from 'vitest';
import { listText } from '../../src/lib/json.js';
import type { Db } from '../../src/storage/database.js';
import type { DevicesTable } from '../../src/storage/schema.js';
import { defineTags } from '../acl/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';

export interface AuthKeyOptions {
  reusable?: boolean;
  ephemeral?: boolean;
  tags?: string[];
  expiresIn?: string;
  user?: string;
  description?: string;
}

export async function createAuthKey(
  server: TestServer,
  options: AuthKeyOptions = {},
  apiKey?: string,
): Promise<{ id: string; key: string }> {
  const res = await server.call('POST', '/v1/keys', { body: { type: 'auth', ...options }, key: apiKey });
  expect(res.status).toBe(201);
  const body = await json(res);
  return { id: body.id, key: body.key };
}

/**
 * A fresh server whose policy owns `tags` (a tag must be in tagOwners before a key or device
 * carries it) and a reusable auth key that enrolls devices with `keyTags`.
 */
export async function startWithAuthKey(
  options: { tags?: string[]; keyTags?: string[] } = {},
): Promise<{ server: TestServer; authKey: string }> {
  const server = await startServer();
  const tags = options.tags ?? options.keyTags ?? [];
  if (tags.length > 0) await defineTags(server, tags);
  const authKey = (await createAuthKey(server, { reusable: true, tags: options.keyTags })).key;
  return { server, authKey };
}

export const newNodeKey = () => `nodekey:${randomBytes(32).toString('hex')}`;

/**
 * A row of the devices table, for suites that insert many devices directly because enrolling
 * each one over HTTP would be slow: an online, untagged, userless linux device.
 */
export function deviceRow(device: {
  id: string;
  networkId: string;
  name: string;
  addrIndex: number;
  nodeTokenHash: string;
  now: number;
  nodeKey?: string;
  clientVersion?: string | null;
}): Insertable<DevicesTable> {
  return {
    id: device.id,
    network_id: device.networkId,
    name: device.name,
    name_base: device.name,
    hostname: device.name,
    os: 'linux',
    user_id: null,
    tags: '[]',
    node_key: device.nodeKey ?? newNodeKey(),
    addr_index: device.addrIndex,
    client_version: device.clientVersion ?? null,
    key_id: null,
    ephemeral: 0,
    created_at: device.now,
    last_seen_at: device.now,
    disconnected: 0,
    expires_at: null,
    node_token_hash: device.nodeTokenHash,
    netmap_version: 1,
    netmap_hash: null,
  };
}

/** The id of the user who owns the test network (its first user). */
export async function networkOwnerId(server: TestServer): Promise<string> {
  const owner = await server.database.storage.db
    .selectFrom('users')
    .select('id')
    .where('network_id', '=', server.networkId)
    .executeTakeFirstOrThrow();
  return owner.id;
}

/** Inserts device rows with their tags (row and tag index) in one transaction, as enrollment writes them. */
export async function insertTaggedDevices(
  db: Db,
  rows: readonly Insertable<DevicesTable>[],
  tags: readonly string[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const row of rows) {
      await trx
        .insertInto('devices')
        .values({ ...row, tags: listText(tags) })
        .execute();
      for (const tag of tags) {
        await trx.insertInto('device_tags').values({ network_id: row.network_id, tag, device_id: row.id }).execute();
      }
    }
  });
}

/** Replaces a device's tags in its row and the tag index in one transaction, as a re-tag does. */
export async function writeTags(db: Db, networkId: string, id: string, tags: readonly string[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('devices')
      .set({ tags: listText(tags) })
      .where('id', '=', id)
      .execute();
    await trx.deleteFrom('device_tags').where('device_id', '=', id).execute();
    for (const tag of tags) {
      await trx.insertInto('device_tags').values({ network_id: networkId, tag, device_id: id }).execute();
    }
  });
}

/** The fields of a list record (GET /v1/devices without fields=all). */
const LIST_FIELDS = [
  'id',
  'name',
  'hostname',
  'os',
  'online',
  'user',
  'tags',
  'created',
  'lastSeen',
  'authorized',
  'keyExpiry',
  'keyExpiryDisabled',
  'keyExpired',
] as const;

/** A detail record (`fields=all`) cut to the fields of a default list record. */
export const listFields = (device: any) => Object.fromEntries(LIST_FIELDS.map((field) => [field, device[field]]));

export function register(server: TestServer, authKey: string | null, body: Record<string, unknown> = {}) {
  return server.call('POST', '/v1/node/register', {
    key: authKey,
    body: { hostname: 'web', os: 'linux', nodeKey: newNodeKey(), ...body },
  });
}

export interface EnrolledDevice {
  device: any;
  nodeToken: string;
}

export async function enroll(
  server: TestServer,
  authKey: string,
  body: Record<string, unknown> = {},
): Promise<EnrolledDevice> {
  const res = await register(server, authKey, body);
  const payload = await json(res);
  expect(res.status, JSON.stringify(payload)).toBe(201);
  return payload;
}

export function nodeCall(server: TestServer, token: string, path: string, body?: unknown) {
  return server.call('POST', `/v1/node/${path}`, { key: token, body: body ?? {} });
}

export async function heartbeat(server: TestServer, token: string, body: Record<string, unknown> = {}) {
  const res = await nodeCall(server, token, 'heartbeat', body);
  return { status: res.status, body: await json(res) };
}

export async function getDevice(server: TestServer, id: string, apiKey?: string) {
  const res = await server.call('GET', `/v1/devices/${id}`, { key: apiKey });
  return { status: res.status, body: await json(res) };
}

export async function listDevices(server: TestServer, query = '', apiKey?: string): Promise<any[]> {
  const res = await server.call('GET', `/v1/devices${query}`, { key: apiKey });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.devices;
}

export async function countDevices(server: TestServer): Promise<number> {
  const row = await server.database.storage.db
    .selectFrom('devices')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function auditEntries(server: TestServer, apiKey?: string): Promise<any[]> {
  const res = await server.call('GET', '/v1/logs/audit?since=24h&limit=1000', { key: apiKey });
  expect(res.status).toBe(200);
  return (await json(res)).entries;
}

/** One of the network's epochs, as stored. */
async function storedEpoch(server: TestServer, epoch: 'netmap_epoch' | 'presence_epoch'): Promise<number> {
  const row = await server.database.storage.db
    .selectFrom('networks')
    .select(epoch)
    .where('id', '=', server.networkId)
    .executeTakeFirstOrThrow();
  return Number(row[epoch]);
}

/** The network's netmap epoch, as stored. */
export const netmapEpoch = (server: TestServer): Promise<number> => storedEpoch(server, 'netmap_epoch');

export async function expectProblem(res: Response, status: number, code: string): Promise<any> {
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(status);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  expect(body.code).toBe(code);
  return body;
}

/** The network's presence epoch, as stored. */
export const presenceEpochOf = (server: TestServer): Promise<number> => storedEpoch(server, 'presence_epoch');

/** A device's stored presence. */
export function storedPresence(server: TestServer, id: string) {
  return server.database.storage.db
    .selectFrom('devices')
    .select(['last_seen_at', 'disconnected'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

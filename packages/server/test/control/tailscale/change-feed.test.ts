/**
 * The change feed map streams wait on: a committed epoch move reaches every follower of the
 * network once, in this process and in another one on the same database; a rolled-back one
 * reaches no one; and a map stream open on one instance receives a change made through another.
 */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { ChangeFeed, type NetworkChange } from '../../../src/modules/netmap/change-feed.js';
import { bumpNetmapEpoch } from '../../../src/modules/network/epochs.js';
import { CHANGE_CHANNEL } from '../../../src/storage/change-signal.js';
import { openStorage, type Storage } from '../../../src/storage/database.js';
import { HUJSON } from '../../acl/helpers.js';
import { json, startServer, type TestServer } from '../../harness.js';
import { type ControlClient, controlClient, nodeKey } from './ts-client.js';

let server: TestServer;
const closing: Array<() => unknown> = [];

beforeEach(async () => {
  server = await startServer();
});
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
  await server.close();
});

/** The same database opened again, as a second `warren serve` would. */
async function secondStorage(): Promise<Storage> {
  const { url, schema } = server.database;
  const storage = await openStorage(url, schema ? { schema, poolSize: 3 } : {});
  closing.push(() => storage.close());
  return storage;
}

function collect(feed: ChangeFeed, networkId: string, count: number) {
  const changes: NetworkChange[][] = Array.from({ length: count }, () => []);
  for (const list of changes) closing.push(feed.follow(networkId, (change) => list.push(change)));
  return changes;
}

/** The network's netmap epoch as the database has it now. */
async function netmapEpoch(storage: Storage): Promise<number> {
  const row = await storage.db
    .selectFrom('networks')
    .select('netmap_epoch')
    .where('id', '=', server.networkId)
    .executeTakeFirstOrThrow();
  return Number(row.netmap_epoch);
}

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the change feed', () => {
  it('tells every follower once per committed move, nothing for a rolled-back one', async () => {
    const { storage } = server.database;
    const feed = new ChangeFeed(server.app.ctx);
    closing.push(() => feed.close());
    const followers = collect(feed, server.networkId, 50);
    const other = collect(feed, 'net_elsewhere', 1)[0];

    const epochNow = () => netmapEpoch(storage);
    const before = await epochNow();
    const heard = (list: NetworkChange[]) => list.filter((change) => change.head.epoch > before);
    await storage.db
      .transaction()
      .execute(async (trx) => {
        await bumpNetmapEpoch(trx, server.networkId);
        throw new Error('abandoned');
      })
      .catch(() => {});
    let early = 0;
    await storage.db.transaction().execute(async (trx) => {
      await bumpNetmapEpoch(trx, server.networkId);
      // Inside the transaction nothing of it is announced yet.
      await new Promise((resolve) => setTimeout(resolve, 100));
      early = heard(followers[0]).length;
    });
    expect(early).toBe(0);
    await until(() => followers.every((f) => heard(f).length === 1));
    // The abandoned bump never committed: the epoch moved once, and each follower heard it once.
    expect(await epochNow()).toBe(before + 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const f of followers) expect(heard(f).map((change) => change.head.epoch)).toEqual([before + 1]);
    expect(other).toEqual([]);
    // The head a session compares with its own map's when it begins to follow.
    expect(feed.headKeyOf(server.networkId)).toBe(followers[0].at(-1)?.key);
    expect(feed.headKeyOf('net_elsewhere')).toBe('');
    // A head read before that move (a session's own read racing it) comes before the feed's;
    // the feed's own head, or one it has not read yet, does not.
    const last = followers[0].at(-1)!.head;
    expect(feed.precedesHeadOf(server.networkId, { ...last, epoch: last.epoch - 1 })).toBe(true);
    expect(feed.precedesHeadOf(server.networkId, last)).toBe(false);
    expect(feed.precedesHeadOf(server.networkId, { ...last, presenceEpoch: last.presenceEpoch + 1 })).toBe(false);
    expect(
      feed.precedesHeadOf(server.networkId, { ...last, epoch: last.epoch - 1, policyVersion: last.policyVersion + 1 }),
    ).toBe(false);
    expect(feed.precedesHeadOf('net_elsewhere', last)).toBe(false);
  });

  it('hears a change committed through another connection to the database', async () => {
    const feed = new ChangeFeed(server.app.ctx);
    closing.push(() => feed.close());
    const [changes] = collect(feed, server.networkId, 1);
    const elsewhere = await secondStorage();
    const before = await netmapEpoch(elsewhere);
    // The feed may first tell of the head it starts from (read when its listener connects), and
    // two moves may be heard in one read: wait for each epoch, not for a count of changes.
    const heard = (epoch: number) => changes.some((change) => change.head.epoch === epoch);
    await elsewhere.db.transaction().execute((trx) => bumpNetmapEpoch(trx, server.networkId));
    await until(() => heard(before + 1));
    await elsewhere.db.transaction().execute((trx) => bumpNetmapEpoch(trx, server.networkId));
    await until(() => heard(before + 2));
  });
});

describe.runIf(process.env.WARREN_TEST_BACKEND === 'postgres')('the change feed on PostgreSQL', () => {
  it('listens again after losing its connection and catches up on what it missed', async () => {
    const feed = new ChangeFeed(server.app.ctx);
    closing.push(() => feed.close());
    const [changes] = collect(feed, server.networkId, 1);
    const elsewhere = await secondStorage();
    const epoch = () => netmapEpoch(elsewhere);
    // Every listening connection is cut (the server restarting, a proxy dropping it); the
    // change lands while this process cannot hear it.
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
      where query = ${`listen ${CHANGE_CHANNEL}`} and pid <> pg_backend_pid()`.execute(elsewhere.db);
    await elsewhere.db.transaction().execute((trx) => bumpNetmapEpoch(trx, server.networkId));
    const target = await epoch();
    await until(() => changes.some((change) => change.head.epoch === target));
    // And it hears the next one as it happens.
    await elsewhere.db.transaction().execute((trx) => bumpNetmapEpoch(trx, server.networkId));
    await until(() => changes.some((change) => change.head.epoch === target + 1));
  });
});

describe('map streams on several instances', () => {
  it('a stream open on one instance receives a policy change made through another', async () => {
    const storage = await secondStorage();
    const other: FastifyInstance = await buildApp({ storage, console: false });
    closing.push(() => other.close());
    await other.listen({ host: '127.0.0.1', port: 0 });
    const address = other.server.address();
    const otherUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

    const keyRes = await server.call('POST', '/v1/keys', { body: { type: 'auth', reusable: true } });
    const { key } = await json(keyRes);
    const client: ControlClient = await controlClient(server.url);
    closing.push(() => client.close());
    const nk = nodeKey();
    const reg = await client.post('/machine/register', {
      NodeKey: nk,
      Auth: { AuthKey: key },
      Hostinfo: { Hostname: 'a' },
    });
    expect(reg.status).toBe(200);
    const stream = client.stream({ Version: 142, NodeKey: nk, Stream: true, Compress: 'zstd', Hostinfo: {} });
    await stream.next(1);

    const policy = '{ "acls": [{ "action": "accept", "src": ["*"], "dst": ["*:443"] }] }';
    const put = await fetch(`${otherUrl}/v1/acl`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': HUJSON },
      body: policy,
    });
    expect(put.status, await put.text()).toBe(200);
    await stream.next(2);
    expect(stream.messages[1].PacketFilter).toEqual([
      { SrcIPs: ['*'], DstPorts: [{ IP: '*', Ports: { First: 443, Last: 443 } }] },
    ]);
  });
});

/**
 * SSH checks (migration 042) are swept by the events worker's retention sweep, not only when a
 * new check starts: a network whose checks stop keeps none past their use. A check's row goes a
 * day after its URL expired unless its confirmation is still in force for the rule's period.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  confirmSshCheck,
  insertSshCheck,
  sshCheckByHash,
} from '../../../src/modules/devices/login/ssh-checks.repository.js';
import { sweepEvents } from '../../../src/modules/events/events.worker.js';
import { startServer, type TestServer } from '../../harness.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let server: TestServer;
beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.close());

describe('SSH check pruning', () => {
  it('drops checks a day past their URL, and confirmations once their period ended', async () => {
    const { db } = server.database.storage;
    const start = async (hash: string, periodMs: number) => {
      const now = server.clock.now();
      await insertSshCheck(db, {
        token_hash: hash,
        network_id: server.networkId,
        src_device_id: 'dev_src',
        dst_device_id: 'dev_dst',
        local_user: 'root',
        period_ms: periodMs,
        created_at: now,
        expires_at: now + 10 * MINUTE,
      });
    };
    await start('unconfirmed', HOUR);
    await start('confirmed-week', 168 * HOUR);
    expect(await confirmSshCheck(db, 'confirmed-week', server.clock.now(), 'usr_owner')).toBe(true);
    const left = async () =>
      (await Promise.all(['unconfirmed', 'confirmed-week'].map((h) => sshCheckByHash(db, h))))
        .filter((row) => row !== undefined)
        .map((row) => row.token_hash);
    const sweep = () => sweepEvents(server.app.ctx);

    // Within a day of their expiry both stay: a late visit still says what happened.
    server.clock.advance(12 * HOUR);
    await sweep();
    expect(await left()).toEqual(['unconfirmed', 'confirmed-week']);

    // A day past: the unconfirmed one goes, the confirmation in force stays.
    server.clock.advance(13 * HOUR);
    await sweep();
    expect(await left()).toEqual(['confirmed-week']);

    // Its week over, it goes too.
    server.clock.advance(144 * HOUR);
    await sweep();
    expect(await left()).toEqual([]);
  });
});

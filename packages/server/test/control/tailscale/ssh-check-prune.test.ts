/**
 * SSH checks (migration 042) and machine logins (migration 023) are swept by the events worker's
 * retention sweep, not only when a new one starts: a network whose checks or logins stop keeps
 * none past their use. A check's row goes a day after its URL expired unless its confirmation is
 * still in force for the rule's period; a login's a day after its URL expired, ended or not.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { endMachineLogin, machineLoginByHash } from '../../../src/modules/devices/login/machine-logins.repository.js';
import {
  confirmSshCheck,
  insertSshCheck,
  sshCheckByHash,
} from '../../../src/modules/devices/login/ssh-checks.repository.js';
import { sweepEvents } from '../../../src/modules/events/events.worker.js';
import { startServer, type TestServer } from '../../harness.js';
import { pendingMachineLogin } from './console-session.js';

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

describe('machine login pruning', () => {
  it('drops logins a day past their URL, ended or not, and keeps newer ones', async () => {
    const { db } = server.database.storage;
    const start = (hash: string) => pendingMachineLogin(server, hash);
    await start('pending');
    await start('refused');
    expect(
      await endMachineLogin(db, 'refused', server.clock.now(), {
        approvedBy: 'usr_owner',
        networkId: server.networkId,
        refusal: 'no',
      }),
    ).toBe(true);
    const left = async (hashes: string[]) =>
      (await Promise.all(hashes.map((h) => machineLoginByHash(db, h))))
        .filter((row) => row !== undefined)
        .map((row) => row.token_hash);
    const sweep = () => sweepEvents(server.app.ctx);

    // Within a day of their expiry both stay: a late visit still says what happened.
    server.clock.advance(12 * HOUR);
    await sweep();
    expect(await left(['pending', 'refused'])).toEqual(['pending', 'refused']);
    await start('recent');

    // A day past: both go; the login started since, its URL expired only half a day ago, stays.
    server.clock.advance(13 * HOUR);
    await sweep();
    expect(await left(['pending', 'refused', 'recent'])).toEqual(['recent']);
  });
});

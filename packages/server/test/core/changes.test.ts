/**
 * A change declares what it touches (core/changes.ts) and its transaction moves each epoch once
 * and logs every device named against it, or, when the change fails, neither.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemActor } from '../../src/core/actor.js';
import { withChanges } from '../../src/core/changes.js';
import { unitOfWork } from '../../src/core/unit-of-work.js';
import { netmapEpoch, presenceEpoch } from '../../src/modules/network/epochs.js';
import { startServer, type TestServer } from '../harness.js';

describe('declared changes', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  const db = () => server.database.storage.db;
  const ctx = () => ({ db: db(), clock: server.clock });
  const actor = () => systemActor(server.networkId, 'test');

  const epochs = async () => {
    const row = await db()
      .selectFrom('networks')
      .select(['netmap_epoch', 'presence_epoch'])
      .where('id', '=', server.networkId)
      .executeTakeFirstOrThrow();
    return { netmap: Number(row.netmap_epoch), presence: Number(row.presence_epoch) };
  };
  const logged = async (table: 'netmap_changes' | 'presence_changes', epoch: number) =>
    (
      await db()
        .selectFrom(table)
        .select('device_id')
        .where('network_id', '=', server.networkId)
        .where('epoch', '=', epoch)
        .orderBy('device_id')
        .execute()
    ).map((row) => row.device_id);

  it('moves an epoch once per unit of work and logs every device named, once', async () => {
    const before = await epochs();
    await unitOfWork(ctx(), actor(), null, async (_trx, _now, changes) => {
      await changes.touch(netmapEpoch, ['dev_b']);
      await changes.touch(netmapEpoch, ['dev_a', 'dev_b']);
      await changes.touch(netmapEpoch);
      return { value: undefined, target: null };
    });
    const after = await epochs();
    expect(after).toEqual({ netmap: before.netmap + 1, presence: before.presence });
    expect(await logged('netmap_changes', after.netmap)).toEqual(['dev_a', 'dev_b']);
  });

  it('moves each epoch declared, with its own devices', async () => {
    const before = await epochs();
    await withChanges(db(), server.networkId, async (_trx, changes) => {
      await changes.touch(presenceEpoch, ['dev_p']);
      await changes.touch(netmapEpoch, ['dev_n']);
    });
    const after = await epochs();
    expect(after).toEqual({ netmap: before.netmap + 1, presence: before.presence + 1 });
    expect(await logged('netmap_changes', after.netmap)).toEqual(['dev_n']);
    expect(await logged('presence_changes', after.presence)).toEqual(['dev_p']);
  });

  it('leaves a move that names no device unlogged, so readers older than it start over', async () => {
    const before = await epochs();
    await unitOfWork(ctx(), actor(), null, async (_trx, _now, changes) => {
      await changes.touch(netmapEpoch);
      return { value: undefined, target: null };
    });
    const after = await epochs();
    expect(after.netmap).toBe(before.netmap + 1);
    expect(await logged('netmap_changes', after.netmap)).toEqual([]);
  });

  it('moves and logs nothing when the change fails', async () => {
    const before = await epochs();
    await expect(
      unitOfWork(ctx(), actor(), null, async (_trx, _now, changes) => {
        await changes.touch(netmapEpoch, ['dev_lost']);
        await changes.touch(presenceEpoch, ['dev_lost']);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await epochs()).toEqual(before);
    expect(await logged('netmap_changes', before.netmap + 1)).toEqual([]);
  });

  it('logs against an epoch its own statement moved', async () => {
    const before = await epochs();
    await withChanges(db(), server.networkId, async (trx, changes) => {
      const to = await netmapEpoch.move(trx, server.networkId);
      changes.moved(netmapEpoch, to);
      await changes.touch(netmapEpoch, ['dev_m']);
    });
    const after = await epochs();
    expect(after.netmap).toBe(before.netmap + 1);
    expect(await logged('netmap_changes', after.netmap)).toEqual(['dev_m']);
  });
});

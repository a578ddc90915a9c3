import { type Compilable, CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceAtQuery, devicesOfMachineQuery } from '../../src/control/tailscale/ssh-devices.repository.js';
import { deviceRoutesQuery } from '../../src/modules/devices/devices.repository.js';
import { deviceOfMachineQuery } from '../../src/modules/devices/enrollment.service.js';
import { listUsersQuery } from '../../src/modules/users/users.repository.js';
import type { Db } from '../../src/storage/database.js';
import { notForIndex } from '../../src/storage/planner.js';
import { backend, freshDatabase, type TestDatabase } from '../harness.js';

/** SQLite's plan for a query, one line per step. */
async function plan(db: Db, query: Compilable<unknown>): Promise<string> {
  const { sql: text, parameters } = query.compile();
  const { rows } = await db.executeQuery<{ detail: string }>(
    CompiledQuery.raw(`explain query plan ${text}`, [...parameters]),
  );
  return rows.map((row) => row.detail).join('\n');
}

describe.skipIf(backend !== 'sqlite')('notForIndex', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.drop());

  const ids = Array.from({ length: 100 }, (_, i) => `dev_${i}`);

  it('looks devices up by primary key while keeping the network in the condition', async () => {
    const { db } = database.storage;
    const lookup = db
      .selectFrom('devices')
      .select('id')
      .where(notForIndex(db, 'devices.network_id'), '=', 'net_a')
      .where('devices.id', 'in', ids);
    expect(await plan(db, lookup)).toMatch(/USING INDEX sqlite_autoindex_devices_1 \(id=\?\)/);
    expect(lookup.compile().sql).toContain('+"devices"."network_id" = ?');
    // Without it, SQLite (no statistics) walks the network through one of its indexes (which one
    // depends on the indexes that start with network_id).
    const plain = db
      .selectFrom('devices')
      .select('id')
      .where('devices.network_id', '=', 'net_a')
      .where('id', 'in', ids);
    expect(await plan(db, plain)).toMatch(/USING (COVERING )?INDEX devices_\w+ \(network_id=\?\)/);
  });
});

describe.skipIf(backend !== 'sqlite')('the user list', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.drop());

  it("reads the network's users by their index and no device (the counts are in each user's row)", async () => {
    const { db } = database.storage;
    const text = await plan(db, listUsersQuery(db, 'net_a'));
    expect(text).toMatch(/SEARCH users USING INDEX \w+ \(network_id=\?\)/);
    expect(text).not.toMatch(/devices/);
  });
});

describe.skipIf(backend !== 'sqlite')("a device's routes", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.drop());

  it("finds them through (device_id, prefix), not by walking the network's routes", async () => {
    const { db } = database.storage;
    const text = await plan(db, deviceRoutesQuery(db, { networkId: 'net_a', deviceId: 'dev_a', cutoff: 0 }));
    expect(text).toMatch(/SEARCH routes USING INDEX sqlite_autoindex_routes_\d \(device_id=\?\)/);
    expect(text).not.toMatch(/SEARCH routes USING INDEX routes_network_state/);
  });
});

describe.skipIf(backend !== 'sqlite')('the devices of a Tailscale SSH check', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.drop());

  it('finds the destination by (network_id, machine_key) and the source by (network_id, addr_index)', async () => {
    const { db } = database.storage;
    expect(await plan(db, devicesOfMachineQuery(db, 'net_a', 'mkey:a'))).toMatch(
      /^SEARCH devices USING (COVERING )?INDEX devices_machine_key_created \(network_id=\? AND machine_key=\?\)$/,
    );
    expect(await plan(db, deviceAtQuery(db, 'net_a', 7))).toMatch(
      /^SEARCH devices USING (COVERING )?INDEX \w+ \(network_id=\? AND addr_index=\?\)$/,
    );
  });
});

describe.skipIf(backend !== 'sqlite')('the device a Tailscale machine enrolled last', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.drop());

  it("is one probe of (network_id, machine_key), its order read from the index, not a walk of the network's devices", async () => {
    const { db } = database.storage;
    const text = await plan(db, deviceOfMachineQuery(db, 'net_a', 'mkey:a'));
    expect(text).toMatch(
      /^SEARCH devices USING (COVERING )?INDEX devices_machine_key_created \(network_id=\? AND machine_key=\?\)$/,
    );
  });
});

import { enroll, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Warren, WarrenError } from '../src/index.js';
import { startWithClient } from './fixture.js';

describe('Warren client: device approval and key expiry', () => {
  let server: TestServer;
  let warren: Warren;
  beforeAll(async () => {
    ({ server, warren } = await startWithClient());
  });
  afterAll(() => server.close());

  it('keeps a new device waiting until it is approved, once', async () => {
    expect((await warren.network.update({ deviceApproval: true })).deviceApproval).toBe(true);
    const [pending] = await enroll(server, ['pending-1']);
    const device = await warren.devices.get(pending!.id);
    expect(device).toMatchObject({ authorized: false, protocol: 'native' });
    expect(device.dnsName).toMatch(/^pending-1\./);

    expect((await warren.devices.approve(device.id)).authorized).toBe(true);
    const again = await warren.devices.approve(device.id).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(WarrenError);
    expect(again).toMatchObject({ status: 409, code: 'invalid_state' });
    await warren.network.update({ deviceApproval: false });
  });

  it('expires a login, and lifts the expiry when it is disabled', async () => {
    const [device] = await enroll(server, ['expiring-1']);
    const before = await warren.devices.get(device!.id);
    expect(Date.parse(before.keyExpiry!)).toBeGreaterThan(Date.now());

    expect((await warren.devices.expire(device!.id)).keyExpired).toBe(true);
    const lifted = await warren.devices.update(device!.id, { keyExpiryDisabled: true });
    expect(lifted).toMatchObject({ keyExpiryDisabled: true, keyExpired: false, keyExpiry: null });
  });
});

/**
 * Map messages are really compressed zstd frames, which an independent decoder (the zstd
 * command-line tool, through ts-client.ts) reads back to the JSON sent.
 */
import { expect, it } from 'vitest';
import { protocolFixture } from './fixture.js';
import { decodeMessages } from './ts-client.js';

const t = protocolFixture();

it('a full map is a compressed zstd frame, much smaller than its JSON', async () => {
  const key = await t.authKey();
  const joined = [];
  for (const name of ['alpha', 'beta', 'gamma', 'delta', 'epsilon']) joined.push(await t.joined(key, name));
  const [alpha] = joined;
  const res = await alpha.client.post('/machine/map', { Version: 142, NodeKey: alpha.nodeKey, Compress: 'zstd' });
  expect(res.status).toBe(200);
  const size = res.body.readUInt32LE(0);
  expect(res.body.length).toBe(4 + size);
  const [full] = decodeMessages(res.body);
  expect((full.Peers as unknown[]).length).toBe(4);
  const json = Buffer.byteLength(JSON.stringify(full));
  // Raw (stored) blocks would be larger than the JSON; compressed, it is well under it.
  expect(size).toBeLessThan(json * 0.6);
});

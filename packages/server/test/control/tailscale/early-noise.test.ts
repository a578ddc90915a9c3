/**
 * The simulated client reads past a control server's early Noise payload (the node-key
 * challenge Headscale and Tailscale's own server write before HTTP/2 starts), however the
 * channel splits it, and passes a channel without one through untouched.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { EarlyPayloadSkipper } from '../../../src/control/tailscale/early-noise.js';

/** An HTTP/2 SETTINGS frame with no settings, as a server's first bytes. */
const SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);

function earlyPayload(json: string): Buffer {
  const body = Buffer.from(json);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  return Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0x54, 0x53]), length, body]);
}

/** What the skipper yields when the channel delivers `bytes` cut at `cuts`. */
async function through(bytes: Buffer, cuts: number[]): Promise<Buffer> {
  const inner = new PassThrough();
  const skipper = new EarlyPayloadSkipper(inner);
  const out: Buffer[] = [];
  skipper.on('data', (chunk: Buffer) => out.push(chunk));
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    inner.write(bytes.subarray(at, cut));
    at = cut;
  }
  await new Promise((resolve) => setImmediate(resolve));
  return Buffer.concat(out);
}

describe('early Noise payload', () => {
  const payload = earlyPayload('{"nodeKeyChallenge":"chalpub:00"}');
  const frames = Buffer.concat([SETTINGS, Buffer.from('rest of the stream')]);

  it('is skipped wherever the channel splits it', async () => {
    const stream = Buffer.concat([payload, frames]);
    for (let cut = 1; cut < stream.length; cut++) {
      expect((await through(stream, [cut])).equals(frames), `cut at ${cut}`).toBe(true);
    }
    expect((await through(stream, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])).equals(frames)).toBe(true);
  });

  it('leaves a stream that starts with HTTP/2 as it is', async () => {
    for (let cut = 1; cut < frames.length; cut++) {
      expect((await through(frames, [cut])).equals(frames), `cut at ${cut}`).toBe(true);
    }
  });

  it('ends the channel on a length no challenge has', async () => {
    const inner = new PassThrough();
    const skipper = new EarlyPayloadSkipper(inner);
    const failed = new Promise<Error>((resolve) => skipper.once('error', resolve));
    const huge = Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0x54, 0x53]), Buffer.from([0x7f, 0, 0, 0])]);
    inner.write(huge);
    expect((await failed).message).toMatch(/early Noise payload/);
    expect(inner.destroyed).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameReader, FrameTooLargeError, FrameType } from '../../../src/control/derp/frames.js';

describe('DERP frame reader', () => {
  it('hands out a frame only once all of it has arrived, however it was cut', () => {
    const frame = encodeFrame(FrameType.sendPacket, Buffer.alloc(32, 7), Buffer.from('payload'));
    const reader = new FrameReader(1024);
    const seen = [];
    for (const byte of frame) seen.push(...reader.push(Buffer.of(byte)));
    expect(seen).toHaveLength(1);
    expect(seen[0]?.type).toBe(FrameType.sendPacket);
    expect(seen[0]?.body).toEqual(Buffer.concat([Buffer.alloc(32, 7), Buffer.from('payload')]));
    expect(reader.buffered).toBe(0);
  });

  it('splits several frames delivered in one piece, keeping an incomplete tail', () => {
    const a = encodeFrame(FrameType.ping, Buffer.from('12345678'));
    const b = encodeFrame(FrameType.keepAlive);
    const c = encodeFrame(FrameType.notePreferred, Buffer.of(1));
    const reader = new FrameReader(1024);
    const first = reader.push(Buffer.concat([a, b, c.subarray(0, 3)]));
    expect(first.map((f) => f.type)).toEqual([FrameType.ping, FrameType.keepAlive]);
    expect(reader.buffered).toBe(3);
    const rest = reader.push(c.subarray(3));
    expect(rest.map((f) => [f.type, [...f.body]])).toEqual([[FrameType.notePreferred, [1]]]);
  });

  it('refuses a frame longer than its limit as soon as the header says so', () => {
    const reader = new FrameReader(100);
    const header = Buffer.from([FrameType.sendPacket, 0, 0, 0x10, 0]); // 4,096 bytes announced
    expect(() => reader.push(header)).toThrow(FrameTooLargeError);
  });

  it('applies a raised limit to the frames that follow', () => {
    const reader = new FrameReader(8);
    reader.limit = 64;
    expect(reader.push(encodeFrame(FrameType.sendPacket, Buffer.alloc(40)))).toHaveLength(1);
  });
});

import { createSocket } from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { bindingRequestId, bindingResponse, startStun } from '../../../src/control/derp/stun.js';

// RFC 5769 §2.2 and §2.3: the XOR-MAPPED-ADDRESS of the sample responses.
const TRANSACTION = Buffer.from('b7e7a701bc34d686fa87dfae', 'hex');

function bindingRequest(id: Buffer): Buffer {
  const header = Buffer.alloc(20);
  header.writeUInt16BE(0x0001, 0);
  header.writeUInt32BE(0x2112a442, 4);
  id.copy(header, 8);
  return header;
}

describe('STUN', () => {
  it("encodes an IPv4 address as RFC 5769's sample response", () => {
    const response = bindingResponse(TRANSACTION, '192.0.2.1', 32853);
    expect(response.subarray(0, 4).toString('hex')).toBe('0101000c');
    expect(response.subarray(20).toString('hex')).toBe('00200008' + '0001a147e112a643');
  });

  it("encodes an IPv6 address as RFC 5769's sample response", () => {
    const response = bindingResponse(TRANSACTION, '2001:db8:1234:5678:11:2233:4455:6677', 32853);
    expect(response.subarray(20).toString('hex')).toBe('00200014' + '0002a147' + '0113a9faa5d3f179bc25f4b5bed2b9d9');
  });

  it('answers Binding requests only', () => {
    expect(bindingRequestId(bindingRequest(TRANSACTION))).toEqual(TRANSACTION);
    const indication = bindingRequest(TRANSACTION);
    indication.writeUInt16BE(0x0011, 0);
    expect(bindingRequestId(indication)).toBeUndefined();
    expect(bindingRequestId(Buffer.from('not stun at all, just some bytes'))).toBeUndefined();
    const badLength = Buffer.concat([bindingRequest(TRANSACTION), Buffer.alloc(3)]);
    expect(bindingRequestId(badLength)).toBeUndefined();
  });

  it('tells a client over UDP the address and port it sent from', async () => {
    const server = await startStun('127.0.0.1', 0);
    const client = createSocket('udp4');
    try {
      await new Promise<void>((resolve) => client.bind(0, '127.0.0.1', resolve));
      const answer = new Promise<Buffer>((resolve) => client.once('message', resolve));
      client.send(bindingRequest(TRANSACTION), server.port, '127.0.0.1');
      const response = await answer;
      expect(response).toEqual(bindingResponse(TRANSACTION, '127.0.0.1', client.address().port));
    } finally {
      client.close();
      await server.close();
    }
  });
});

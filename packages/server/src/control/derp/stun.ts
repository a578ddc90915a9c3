/**
 * The STUN responder beside the relay (RFC 8489 Binding, UDP): a device asks what address and
 * port its packets come from, which is how it learns its public endpoint for direct connections
 * and measures its latency to the relay. Only Binding requests are answered, with the one
 * attribute Tailscale's clients read (XOR-MAPPED-ADDRESS); anything else is ignored. An answer
 * is no larger than the request it answers, so the responder cannot amplify a spoofed flood.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { isIPv4 } from 'node:net';

const HEADER_LENGTH = 20;
const MAGIC_COOKIE = 0x2112a442;
const BINDING_REQUEST = 0x0001;
const BINDING_SUCCESS = 0x0101;
const XOR_MAPPED_ADDRESS = 0x0020;

/** The transaction id of a Binding request, or undefined for anything else. */
export function bindingRequestId(packet: Buffer): Buffer | undefined {
  if (packet.length < HEADER_LENGTH) return undefined;
  if (packet.readUInt16BE(0) !== BINDING_REQUEST) return undefined;
  if (packet.readUInt32BE(4) !== MAGIC_COOKIE) return undefined;
  const length = packet.readUInt16BE(2);
  if (length % 4 !== 0 || HEADER_LENGTH + length !== packet.length) return undefined;
  return packet.subarray(8, HEADER_LENGTH);
}

/** A Binding success response telling the requester the address and port it was seen from. */
export function bindingResponse(transactionId: Buffer, address: string, port: number): Buffer {
  const ip = addressBytes(address);
  const response = Buffer.alloc(HEADER_LENGTH + 8 + ip.length);
  response.writeUInt16BE(BINDING_SUCCESS, 0);
  response.writeUInt16BE(8 + ip.length, 2);
  response.writeUInt32BE(MAGIC_COOKIE, 4);
  transactionId.copy(response, 8);
  response.writeUInt16BE(XOR_MAPPED_ADDRESS, 20);
  response.writeUInt16BE(4 + ip.length, 22);
  response[25] = ip.length === 4 ? 0x01 : 0x02;
  response.writeUInt16BE(port ^ (MAGIC_COOKIE >>> 16), 26);
  // The address is XORed with the cookie, then (IPv6) with the transaction id.
  const mask = response.subarray(4, HEADER_LENGTH);
  for (let i = 0; i < ip.length; i++) response[28 + i] = (ip[i] as number) ^ (mask[i] as number);
  return response;
}

function addressBytes(address: string): Buffer {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const v4 = mapped?.[1] ?? (isIPv4(address) ? address : undefined);
  if (v4) return Buffer.from(v4.split('.').map(Number));
  return ipv6Bytes(address);
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.replace(/%.*$/, '').split('::');
  const words = (part: string) => (part === '' ? [] : part.split(':').map((word) => Number.parseInt(word, 16)));
  const front = words(head);
  const back = address.includes('::') ? words(tail) : [];
  const all = [...front, ...new Array(8 - front.length - back.length).fill(0), ...back];
  const bytes = Buffer.alloc(16);
  for (const [i, word] of all.entries()) bytes.writeUInt16BE(word, i * 2);
  return bytes;
}

export interface StunServer {
  port: number;
  close(): Promise<void>;
}

/** Answers Binding requests on host:port (port 0: any free port, reported back). */
export async function startStun(host: string, port: number): Promise<StunServer> {
  const socket: Socket = createSocket({ type: host.includes(':') ? 'udp6' : 'udp4' });
  socket.on('message', (packet: Buffer, from: RemoteInfo) => {
    const id = bindingRequestId(packet);
    if (id) socket.send(bindingResponse(id, from.address, from.port), from.port, from.address);
  });
  socket.on('error', () => {}); // a send to a vanished peer must not bring the server down
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, host, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  return {
    port: socket.address().port,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

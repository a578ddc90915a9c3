/**
 * The address a call came from, read once per connection when it is accepted. Node asks the
 * kernel for a socket's peer only when first asked, and once the client has reset or closed
 * the connection the kernel has no peer to give: a call whose client left before its audit
 * entry was built would have had no address, and its entry (a NOT NULL column) would have
 * failed the whole batch it was written with.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';

const addresses = new WeakMap<Socket, string>();

/** Notes the peer of every connection the server accepts, before any of its bytes are read. */
export function recordClientAddresses(server: Server): void {
  server.on('connection', (socket: Socket) => {
    addresses.set(socket, socket.remoteAddress ?? '');
  });
}

/** A connection's client as noted when it was accepted ('' when the kernel already had none). */
export function socketAddress(socket: Socket): string {
  return addresses.get(socket) ?? socket.remoteAddress ?? '';
}

/** The client of a call: its connection's, as noted when the connection was accepted. */
export function clientAddress(request: FastifyRequest): string {
  return socketAddress(request.socket);
}

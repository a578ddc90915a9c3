/**
 * HTTP upgrades, for the device protocols that leave HTTP after their first request (the DERP
 * relay at `/derp`, Tailscale's control protocol at `/ts2021`). Node hands every request that
 * carries an `Upgrade` header to the server's `upgrade` listeners once there is one, so a
 * request for any other path — an API call from a client that offers `Upgrade: h2c`, say — is
 * passed back to the app's router with a response bound to its socket, and is answered as if
 * no upgrade had been offered. A handler may decline a request the same way (a wrong method or
 * protocol), so its refusal is the app's ordinary problem response.
 */
import { type IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** Takes the socket and returns true, or returns false to leave the request to the router. */
export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => boolean;

export function routeUpgrades(
  server: Server,
  handlers: ReadonlyMap<string, UpgradeHandler>,
  router: (request: IncomingMessage, response: ServerResponse) => void,
): void {
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? '/').split('?', 1)[0] as string;
    if (handlers.get(path)?.(request, socket, head)) return;
    if (head.length > 0) socket.unshift(head);
    const response = new ServerResponse(request);
    response.assignSocket(socket as Parameters<ServerResponse['assignSocket']>[0]);
    response.shouldKeepAlive = false; // the parser has let go of this socket: one answer, then close
    response.on('finish', () => socket.end());
    router(request, response);
  });
}

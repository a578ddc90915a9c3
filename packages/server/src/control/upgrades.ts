/**
 * HTTP upgrades, for the device protocols that leave HTTP after their first request (the DERP
 * relay at `/derp`, Tailscale's control protocol at `/ts2021`). Node hands every request that
 * carries an `Upgrade` header to the server's `upgrade` listeners once there is one, so a
 * request for any other path — an API call from a client that offers `Upgrade: h2c`, say — is
 * passed back to the app's router with a response bound to its socket, and is answered as if
 * no upgrade had been offered. A handler may decline a request the same way (a wrong method or
 * protocol), so its refusal is the app's ordinary problem response. CONNECT, which Node also
 * takes from the parser, is answered the same way.
 */
import { type IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** Takes the socket and returns true, or returns false to leave the request to the router. */
export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => boolean;

export function routeUpgrades(
  server: Server,
  handlers: ReadonlyMap<string, UpgradeHandler>,
  router: (request: IncomingMessage, response: ServerResponse) => void,
): void {
  /** The request answered by the router on the socket the parser let go of: one answer, then close. */
  const answer = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (head.length > 0) socket.unshift(head);
    const response = new ServerResponse(request);
    response.assignSocket(socket as Parameters<ServerResponse['assignSocket']>[0]);
    response.shouldKeepAlive = false;
    // Closed once the answer is written, as Node closes a `Connection: close` response's socket:
    // the parser no longer reads this one, so the client's own end would never be noticed.
    response.on('finish', () => (socket as Socket).destroySoon());
    router(request, response);
  };
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? '/').split('?', 1)[0] as string;
    if (handlers.get(path)?.(request, socket, head)) return;
    answer(request, socket, head);
  });
  // Without a listener Node drops a CONNECT without a word; Warren is no proxy, so the router
  // answers it as any method it does not serve (a problem, http/request-line.ts). The bytes
  // after it are never relayed nor read as another request.
  server.on('connect', answer);
}

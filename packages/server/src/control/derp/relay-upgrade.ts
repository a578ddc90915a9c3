/**
 * `GET /derp` with `Upgrade: DERP`: answers 101 (unless the client asked for a fast start with
 * `Derp-Fast-Start: 1`, in which case the relay protocol begins at once) and hands the socket to
 * the relay. Anything else at `/derp` is left to the router, which answers it as a problem.
 * WebSocket DERP (browsers' js/wasm clients) is not offered.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { UpgradeHandler } from '../upgrades.js';
import { PROTOCOL_VERSION } from './frames.js';
import type { DerpRelay } from './relay.js';

export function relayUpgrade(relay: DerpRelay): UpgradeHandler {
  return (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (request.method !== 'GET' || String(request.headers.upgrade).toLowerCase() !== 'derp') return false;
    // Relayed packets are small and latency-bound; the HTTP server's idle timeout no longer applies.
    (socket as Socket).setNoDelay?.(true);
    (socket as Socket).setTimeout?.(0);
    if (request.headers['derp-fast-start'] !== '1') {
      socket.write(
        'HTTP/1.1 101 Switching Protocols\r\n' +
          'Upgrade: DERP\r\n' +
          'Connection: Upgrade\r\n' +
          `Derp-Version: ${PROTOCOL_VERSION}\r\n` +
          `Derp-Public-Key: ${relay.publicKey.toString('hex')}\r\n\r\n`,
      );
    }
    relay.accept(socket, head);
    return true;
  };
}

/** Two Noise connections joined by in-memory carriers, for the tests of the record layer. */
import { PassThrough } from 'node:stream';
import { type Carrier, NoiseConn } from '../../../src/control/tailscale/noise-conn.js';
import { x25519Generate } from '../../../src/control/tailscale/noise-crypto.js';
import { initiate, respond } from '../../../src/control/tailscale/noise-handshake.js';

/** A carrier that writes to `out` and reads what arrives on `from`. */
export const carrier = (out: PassThrough, from: PassThrough): Carrier => ({
  write: (c, cb) => out.write(c, cb),
  end: () => out.end(),
  destroy: () => out.destroy(),
  on: from.on.bind(from) as never,
});

export function connectedPair() {
  const server = x25519Generate();
  const client = initiate(x25519Generate(), server.publicKey, 142);
  const answer = respond(server, client.initiation);
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const wire: Buffer[] = [];
  toServer.on('data', (c: Buffer) => wire.push(c));
  const serverConn = new NoiseConn(carrier(toClient, toServer), answer.session);
  const clientConn = new NoiseConn(carrier(toServer, toClient), client.finish(answer.response));
  return { serverConn, clientConn, wire, toServer, session: answer.session };
}

export const readN = (conn: NoiseConn, n: number) =>
  new Promise<Buffer>((resolve, reject) => {
    const got: Buffer[] = [];
    let size = 0;
    conn.on('data', (c: Buffer) => {
      got.push(c);
      size += c.length;
      if (size >= n) resolve(Buffer.concat(got));
    });
    conn.on('error', reject);
  });

/**
 * A client that leaves at once (a browser dropping a fetch as it navigates, a script killed
 * mid-call): its calls are still in the audit log, with the address they came from. The
 * address used to be read only when the entry was built; by then the kernel had no peer for
 * a reset connection, the entry had none, and the batch it was written with failed whole.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../harness.js';
import { waitFor } from '../webhooks/receiver.js';

const CONNECTIONS = 30;

function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Sends a request and resets the connection at once: the bytes are already with the server's
 * kernel, which hands them over, but by the time the server reads them it has no peer left.
 */
function sendAndReset(socket: Socket, request: string): Promise<void> {
  return new Promise((resolve) => {
    socket.on('error', () => {});
    socket.on('close', () => resolve());
    socket.write(request);
    socket.resetAndDestroy();
  });
}

/** Resolves once the server has accepted `count` connections. */
async function accepted(server: TestServer, count: number): Promise<void> {
  for (;;) {
    const open = await new Promise<number>((resolve, reject) =>
      server.app.server.getConnections((error, n) => (error ? reject(error) : resolve(n))),
    );
    if (open >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('audit entries of clients that leave at once', () => {
  let server: TestServer;
  const writeFailures: unknown[] = [];
  beforeAll(async () => {
    server = await startServer();
    server.app.ctx.audit.onError = (error) => writeFailures.push(error);
  });
  afterAll(() => server.close());

  it('records every call the server took, with its address, when the client resets the connection', async () => {
    // Connections the server has accepted and read nothing from yet, like a browser's pool.
    const sockets = await Promise.all(Array.from({ length: CONNECTIONS }, () => open(server.url)));
    await accepted(server, CONNECTIONS);
    const ids = sockets.map((_, i) => `gone-${i}`);
    await Promise.all(
      sockets.map((socket, i) => {
        const id = ids[i];
        // Reads (entries queued after the answer) and changes (entries written with the change).
        const request =
          i % 3 === 2
            ? `POST /v1/keys HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.apiKey}\r\n` +
              `Content-Type: application/json\r\nContent-Length: 2\r\nX-Request-Id: ${id}\r\n\r\n{}`
            : `GET ${i % 3 ? '/v1/devices' : '/v1/network'} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
              `Authorization: Bearer ${server.apiKey}\r\nX-Request-Id: ${id}\r\n\r\n`;
        return sendAndReset(socket, request);
      }),
    );
    // The connections are gone; their calls finish on their own time, and each leaves an entry.
    let rows: { request_id: string; client_addr: string }[] = [];
    const allWritten = async () => {
      await server.app.ctx.audit.flush();
      rows = await server.database.storage.db
        .selectFrom('audit_log')
        .select(['request_id', 'client_addr'])
        .where('request_id', 'in', ids)
        .execute();
      return rows.length === ids.length;
    };
    await waitFor(allWritten).catch(() => {});
    expect(writeFailures).toEqual([]);
    expect(rows.map((row) => row.request_id).sort()).toEqual([...ids].sort());
    for (const row of rows) expect(row).toEqual({ request_id: row.request_id, client_addr: '127.0.0.1' });
  });
});

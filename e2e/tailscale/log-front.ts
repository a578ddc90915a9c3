/**
 * What an operator puts between Tailscale clients and Warren to receive their network flow
 * logs (docs/TAILSCALE.md), made small: the client's flow logger always uploads to
 * https://log.tailscale.com, so the clients get an HTTPS proxy (`HTTPS_PROXY`, which its log
 * transport honours) and a CA of the test's own (`SSL_CERT_FILE`). The proxy tunnels CONNECT
 * to log.tailscale.com:443 into a TLS endpoint with a certificate from that CA, which forwards
 * each upload to Warren unchanged and answers with Warren's answer. Any other CONNECT target is
 * refused: nothing goes anywhere but Warren.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';

export const LOG_HOST = 'log.tailscale.com';

export interface LogUpload {
  /** The logtail collection, e.g. tailtraffic.log.tailscale.io. */
  collection: string;
  /** The private log id in the path. */
  id: string;
  copyId: string | null;
  /** The TLS server name the client asked for. */
  serverName: string | undefined;
  /** Warren's answer. */
  status: number;
  answer: string;
}

export interface LogFront {
  /** For the clients' HTTPS_PROXY. */
  proxyUrl: string;
  /** The CA bundle for the clients' SSL_CERT_FILE. */
  caFile: string;
  /** Every upload forwarded, in order. */
  uploads: LogUpload[];
  close(): void;
}

/** A CA and a certificate it signed for log.tailscale.com (ECDSA P-256, valid for a day). */
function issueCertificate(dir: string): { caFile: string; key: Buffer; cert: Buffer } {
  const openssl = (args: string) => execFileSync('openssl', args.split(' '), { cwd: dir, stdio: 'pipe' });
  const key = '-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes';
  openssl(
    `req -x509 ${key} -keyout ca.key -out ca.pem -days 1 -subj /CN=warren-test-ca` +
      ' -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl(`req ${key} -keyout log.key -out log.csr -subj /CN=${LOG_HOST}`);
  writeFileSync(join(dir, 'log.ext'), `subjectAltName=DNS:${LOG_HOST}\nextendedKeyUsage=serverAuth\n`);
  openssl('x509 -req -in log.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -extfile log.ext -out log.pem');
  return {
    caFile: join(dir, 'ca.pem'),
    key: readFileSync(join(dir, 'log.key')),
    cert: readFileSync(join(dir, 'log.pem')),
  };
}

export async function startLogFront(dir: string, port: number, warrenUrl: string): Promise<LogFront> {
  const { caFile, key, cert } = issueCertificate(dir);
  const uploads: LogUpload[] = [];

  const tls = createHttpsServer({ key, cert, minVersion: 'TLSv1.3' }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', `https://${LOG_HOST}`);
      const [, c, collection = '', id = ''] = url.pathname.split('/');
      const headers: Record<string, string> = {};
      for (const name of ['content-encoding', 'orig-content-length', 'content-type']) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      try {
        const answer = await fetch(`${warrenUrl}${req.url}`, {
          method: req.method,
          headers,
          body: req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks),
          signal: AbortSignal.timeout(10_000),
        });
        const text = await answer.text();
        if (c === 'c') {
          uploads.push({
            collection,
            id,
            copyId: url.searchParams.get('copyId'),
            serverName: (req.socket as TLSSocket).servername || undefined,
            status: answer.status,
            answer: text,
          });
        }
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
        res.end(text);
      } catch (error) {
        res.writeHead(502).end(String(error));
      }
    });
  });

  const proxy: Server = createHttpServer((_req, res) => res.writeHead(405).end('CONNECT only\n'));
  proxy.on('connect', (req, socket: Socket, head: Buffer) => {
    if (req.url !== `${LOG_HOST}:443`) {
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) socket.unshift(head);
    tls.emit('connection', socket);
  });
  await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
  return {
    proxyUrl: `http://127.0.0.1:${port}`,
    caFile,
    uploads,
    close() {
      proxy.close();
      tls.close();
      tls.closeAllConnections();
    },
  };
}

// The api benchmark's baseline: a bare node:http server that checks the bearer header and
// answers each path with fixed bytes, run in its own process as `warren serve` is.
// Usage: tsx bench/raw-server.ts BODIES.json (a map of path → { apiKey, body }); prints its port.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const { apiKey, bodies } = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as {
  apiKey: string;
  bodies: Record<string, string>;
};
const expected = `Bearer ${apiKey}`;
const buffers = new Map(Object.entries(bodies).map(([path, body]) => [path, Buffer.from(body)]));

const server = createServer((request, response) => {
  const body = buffers.get(request.url ?? '');
  if (request.headers.authorization !== expected || !body) {
    response.writeHead(401).end();
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  response.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

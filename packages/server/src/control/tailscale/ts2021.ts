/**
 * Tailscale's control protocol on Warren's HTTP server:
 *  - `GET /key?v=N`: the server's Noise public key, with no credential (the client's first call);
 *  - `POST /ts2021` with `Upgrade: tailscale-control-protocol` and the client's handshake
 *    initiation in `X-Tailscale-Handshake` (base64): the server answers 101, then the Noise
 *    response, then speaks HTTP/2 (as server) over the encrypted channel. Plain http:// login
 *    servers work: the Noise layer is what protects the traffic.
 * Over that channel: /machine/register, /machine/map and the SSH check's actions
 * (ssh-action.ts); what Warren does not offer is refused with why (unserved.ts), anything
 * else is 404.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { constants, performServerHandshake, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createWebSocketStream, type WebSocket, WebSocketServer } from 'ws';
import { invalidRequest } from '../../core/errors.js';
import { socketAddress } from '../../edge/client-address.js';
import { ChangeFeed } from '../../modules/netmap/change-feed.js';
import type { UpgradeHandler } from '../upgrades.js';
import { derpMap } from './derp-map.js';
import { machineKey, machineKeyText } from './machine-key.js';
import { listProblem, type MapRequest } from './map-request.js';
import type { Control } from './map-state.js';
import { serveMap } from './map-stream.js';
import { NoiseConn } from './noise-conn.js';
import { errorFrame, HandshakeError, INITIATION_LEN, respond } from './noise-handshake.js';
import { type RegisterRequest, register } from './register.js';
import { isSshActionPath, sshAction } from './ssh-action.js';
import { FEATURE_QUERY, unservedText } from './unserved.js';

export const UPGRADE_PROTOCOL = 'tailscale-control-protocol';
const HANDSHAKE_HEADER = 'x-tailscale-handshake';
/** Request bodies over the channel are small JSON documents (a MapRequest with Hostinfo). */
export const MAX_BODY = 1024 * 1024;
/**
 * What one channel may hold of request bodies still arriving, across all its streams, and how
 * many streams it may have open: with both, the memory a connection can make the server hold
 * is bounded whatever it sends (the Noise layer holds at most one record, and HTTP/2 its own
 * session memory, 10 MiB by default). tailscaled keeps a map stream and a few short requests
 * open at once.
 */
export const MAX_CHANNEL_BODIES = 2 * MAX_BODY;
export const MAX_CHANNEL_STREAMS = 32;
/**
 * The largest WebSocket message taken (the WebSocket form of the channel). Tailscale's client
 * sends each Noise record (at most 4096 bytes) as a message of its own; a message is held
 * whole until it ends, so this is what one WebSocket can make the server hold before a record
 * is even read. Past it the WebSocket is closed (1009).
 */
export const MAX_WEBSOCKET_MESSAGE = 256 * 1024;
/**
 * A channel with no frame either way for this long is closed: a map stream carries the
 * server's keep-alives, so only a client that completed a handshake (or replayed someone
 * else's, which it cannot follow with a valid record) and then went silent is cut. Without it
 * each such connection held a socket, a Noise session and an HTTP/2 session for ever.
 */
const IDLE_MS = 120_000;

export async function tailscaleRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.get('/key', { config: { auth: 'none' }, schema: { hide: true } }, async () => {
    const key = await machineKey(ctx.db);
    return { legacyPublicKey: `mkey:${'0'.repeat(64)}`, publicKey: machineKeyText(key.publicKey) };
  });
  // A /ts2021 request the upgrade declined (ts2021Upgrade) reaches the router: it is answered
  // 400 with what is missing, as Tailscale's own server (control/controlhttp) and Headscale
  // answer it, not with the API's 401 (no credential is asked of this path).
  app.route({
    method: ['GET', 'POST'],
    url: '/ts2021',
    config: { auth: 'none', audit: false },
    schema: { hide: true },
    handler: async (request) => {
      throw invalidRequest(whyNotUpgraded(request.method, request.headers));
    },
  });
}

/** What a /ts2021 request lacks to become a control channel, in controlhttp's words first. */
function whyNotUpgraded(method: string, headers: IncomingHttpHeaders): string {
  const protocol = String(headers.upgrade ?? '').toLowerCase();
  const how = `POST /ts2021 with "Upgrade: ${UPGRADE_PROTOCOL}" and the Noise initiation in X-Tailscale-Handshake`;
  if (protocol === '') return `missing next protocol: send ${how}`;
  if (protocol === 'websocket') {
    return `invalid WebSocket upgrade: send GET /ts2021 with the subprotocol ${UPGRADE_PROTOCOL} and the Noise initiation in the X-Tailscale-Handshake query parameter`;
  }
  if (protocol !== UPGRADE_PROTOCOL) return `unknown next protocol "${protocol}": send ${how}`;
  if (method !== 'POST') return `the control protocol is upgraded from a POST: send ${how}`;
  if (headers[HANDSHAKE_HEADER] === undefined) return `missing Tailscale handshake header: send ${how}`;
  return `invalid Tailscale handshake header: X-Tailscale-Handshake must be the ${INITIATION_LEN}-byte Noise initiation in base64`;
}

/**
 * The `/ts2021` upgrade (control/upgrades.ts). A request that is not a POST asking for the
 * control protocol with a handshake is declined, so the router answers it as a plain request.
 */
export function ts2021Upgrade(app: FastifyInstance): UpgradeHandler {
  // One feed for the process's streams (one LISTEN connection on PostgreSQL, not one per stream).
  const feed = new ChangeFeed(app.ctx, (error) => app.log.warn({ err: error }, 'reading a network change failed'));
  app.addHook('onClose', async () => feed.close());
  const control: Control = { ctx: app.ctx, derpMap: (settings) => derpMap(app, settings), feed };
  // The WebSocket form (browsers, and clients behind proxies that pass only WebSockets):
  // GET /ts2021?X-Tailscale-Handshake=<base64> with the control protocol as subprotocol; the
  // Noise messages then travel in binary WebSocket messages, read as one byte stream.
  const websockets = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_WEBSOCKET_MESSAGE,
    handleProtocols: (offered) => (offered.has(UPGRADE_PROTOCOL) ? UPGRADE_PROTOCOL : false),
  });
  app.addHook('onClose', async () => websockets.close());
  const failed = (socket: Duplex) => (error: unknown) => {
    app.log.warn({ err: error }, 'ts2021 upgrade failed');
    socket.destroy();
  };
  return (request, socket, head) => {
    const protocol = String(request.headers.upgrade ?? '').toLowerCase();
    if (request.method === 'GET' && protocol === 'websocket') {
      const query = new URL(request.url ?? '/', 'http://control').searchParams;
      const init = Buffer.from(query.get('X-Tailscale-Handshake') ?? '', 'base64');
      const offered = String(request.headers['sec-websocket-protocol'] ?? '').split(',');
      if (init.length !== INITIATION_LEN || !offered.some((p) => p.trim() === UPGRADE_PROTOCOL)) return false;
      websockets.handleUpgrade(request, socket, head, (websocket) => {
        acceptWebSocket(control, init, websocket, socket).catch(failed(socket));
      });
      return true;
    }
    const init = Buffer.from(String(request.headers[HANDSHAKE_HEADER] ?? ''), 'base64');
    if (request.method !== 'POST' || protocol !== UPGRADE_PROTOCOL || init.length !== INITIATION_LEN) return false;
    accept(control, init, socket, head).catch(failed(socket));
    return true;
  };
}

/** The handshake's answer, or the error frame the client reads when the initiation is refused. */
async function answerHandshake(control: Control, init: Buffer) {
  const server = await machineKey(control.ctx.db);
  try {
    return { answer: respond(server, init) };
  } catch (error) {
    if (!(error instanceof HandshakeError)) throw error;
    return { refusal: errorFrame(error.message) };
  }
}

async function accept(control: Control, init: Buffer, socket: Duplex, head: Buffer): Promise<void> {
  const switching = `HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${UPGRADE_PROTOCOL}\r\nConnection: upgrade\r\n\r\n`;
  const { answer, refusal } = await answerHandshake(control, init);
  if (!answer) {
    socket.end(Buffer.concat([Buffer.from(switching), refusal]));
    return;
  }
  // The 101 and the handshake response go out together, before the server's first HTTP/2 frames.
  socket.write(Buffer.concat([Buffer.from(switching), answer.response]));
  serveChannel(control, new NoiseConn(socket, answer.session, head), answer.session.peerStatic, socket);
}

async function acceptWebSocket(control: Control, init: Buffer, websocket: WebSocket, socket: Duplex) {
  const { answer, refusal } = await answerHandshake(control, init);
  if (!answer) {
    websocket.send(refusal, { binary: true }, () => websocket.close());
    return;
  }
  websocket.send(answer.response, { binary: true });
  const stream = createWebSocketStream(websocket);
  stream.on('error', () => stream.destroy());
  serveChannel(control, new NoiseConn(stream, answer.session, Buffer.alloc(0)), answer.session.peerStatic, socket);
}

/**
 * HTTP/2 over an established Noise channel: register, map and the rest, for one machine. A
 * channel carries a handful of requests in its life, whose headers are a few short fields: no
 * HPACK dynamic table either way (headerTableSize 0 tells the client not to keep one for what
 * it sends), which spares each of the fleet's sessions the header entries it would hold.
 */
function serveChannel(control: Control, conn: NoiseConn, peerStatic: Buffer, socket: Duplex): void {
  const session = performServerHandshake(conn, {
    settings: { maxConcurrentStreams: MAX_CHANNEL_STREAMS, maxHeaderListSize: 64 * 1024, headerTableSize: 0 },
    maxDeflateDynamicTableSize: 0,
  });
  const peer = machineKeyText(peerStatic);
  const clientAddr = socketAddress(socket as Socket);
  session.on('error', () => conn.destroy());
  const idleMs = control.ctx.settings.controlIdleTimeoutMs ?? IDLE_MS;
  session.on('timeout', () => {
    session.destroy();
    conn.destroy();
  });
  session.setTimeout(idleMs);
  // A login's follow-up waits for a person with nothing to send meanwhile: the channel is busy,
  // not idle, so the timeout is off while any such request waits.
  let waiting = 0;
  // Bytes of request bodies read and not yet handled, over every stream of the channel.
  let bodies = 0;
  const charge = (bytes: number): boolean => {
    bodies += bytes;
    if (bodies <= MAX_CHANNEL_BODIES) return true;
    // More than any honest client sends at once: the whole channel goes, not one stream.
    session.destroy(undefined, constants.NGHTTP2_ENHANCE_YOUR_CALM);
    conn.destroy();
    return false;
  };
  const hold = () => {
    if (waiting++ === 0) session.setTimeout(0);
    return () => {
      if (--waiting === 0 && !session.destroyed) session.setTimeout(idleMs);
    };
  };
  session.on('stream', (stream, headers) => {
    // A stream reset or cut with its session ends in 'close' as well, where its handler cleans up.
    stream.on('error', ignoreStreamError);
    const path = String(headers[constants.HTTP2_HEADER_PATH] ?? '');
    handle(control, { machine: peer, clientAddr, hold, charge }, stream, path).catch(() => {
      if (!stream.destroyed) stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    });
  });
}

/** Without a listener a stream's error would throw; the handler in charge learns of it by 'close'. */
function ignoreStreamError(): void {}

/**
 * The request body, counted against the channel's budget (`charge`) while it is held. Once the
 * body is read its listeners go: a map stream stays open for as long as the device is
 * connected, and listeners left on it would keep this promise, hence the body (a slice of an
 * 8 KiB buffer pool), for all that time.
 */
function readBody(stream: ServerHttp2Stream, charge: Channel['charge']): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const release = () => {
      charge(-size);
      size = 0;
      chunks.length = 0;
    };
    const settle = (error?: Error) => {
      stream.off('data', onData).off('end', onEnd).off('error', settle).off('close', onClose);
      if (error) {
        release();
        reject(error);
        return;
      }
      const body = Buffer.concat(chunks);
      release();
      resolve(body);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (!charge(chunk.length)) settle(new Error('the channel holds too much request data'));
      else if (size > MAX_BODY) {
        settle(new Error('request body too large'));
        stream.close(constants.NGHTTP2_REFUSED_STREAM);
      } else chunks.push(chunk);
    };
    const onEnd = () => settle();
    const onClose = () => settle(new Error('the stream closed before its body ended'));
    stream.on('data', onData).on('end', onEnd).on('error', settle).on('close', onClose);
  });
}

/** The Noise channel a request came on: the machine key it proved, its address, its idle timer. */
interface Channel {
  machine: string;
  clientAddr: string;
  /** Stops the idle timeout until the returned function is called. */
  hold: () => () => void;
  /** Counts request body bytes held (negative: released); false when the channel was closed for it. */
  charge: (bytes: number) => boolean;
}

async function handle(control: Control, channel: Channel, stream: ServerHttp2Stream, path: string): Promise<void> {
  const { machine, clientAddr } = channel;
  const reply = (status: number, text: string, headers: Record<string, string> = {}) => {
    if (stream.destroyed) return;
    stream.respond({ ':status': status, 'content-type': 'text/plain; charset=utf-8', ...headers });
    stream.end(text);
  };
  const json = (body: unknown) => {
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
    stream.end(JSON.stringify(body));
  };
  const route = path.split('?')[0];
  if (isSshActionPath(route)) {
    // Held while a check waits for its confirmation: the channel must not idle out meanwhile.
    const closed = new Promise<void>((resolve) => stream.once('close', resolve));
    const release = channel.hold();
    const outcome = await sshAction(control.ctx, machine, path, closed).finally(release);
    if (outcome.action) json(outcome.action);
    else if (outcome.text) reply(outcome.status, outcome.text);
    return;
  }
  if (route !== '/machine/register' && route !== '/machine/map') {
    await refuseUnserved(stream, channel, route, reply);
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse((await readBody(stream, channel.charge)).toString('utf8'));
  } catch {
    reply(400, 'the request body is not JSON');
    return;
  }
  if (typeof body !== 'object' || body === null || typeof (body as { NodeKey?: unknown }).NodeKey !== 'string') {
    reply(400, 'the request has no NodeKey');
    return;
  }
  const tooLong = listProblem(body as MapRequest);
  if (tooLong) {
    reply(400, tooLong);
    return;
  }
  if (route === '/machine/register') {
    const closed = new Promise<void>((resolve) => stream.once('close', resolve));
    const release = channel.hold();
    const outcome = await register(control.ctx, machine, body as RegisterRequest, { clientAddr, closed }).finally(
      release,
    );
    if (outcome.status === 429) reply(429, 'too many registrations', { 'retry-after': String(outcome.retryAfter) });
    else json(outcome.body);
    return;
  }
  await serveMap(control, machine, body as MapRequest, stream, reply);
}

/**
 * A path Warren does not serve: 501 with what the person's command cannot do here when it is
 * one tailscaled calls for a command (unserved.ts), else 404. Only the feature query's body is
 * read, for the feature it names.
 */
async function refuseUnserved(
  stream: ServerHttp2Stream,
  channel: Channel,
  route: string,
  reply: (status: number, text: string) => void,
): Promise<void> {
  let feature: string | undefined;
  if (route === FEATURE_QUERY) {
    try {
      const body = JSON.parse((await readBody(stream, channel.charge)).toString('utf8')) as { Feature?: unknown };
      if (typeof body?.Feature === 'string') feature = body.Feature;
    } catch {
      // A body that is not the query's JSON names no feature: the answer says so.
    }
  }
  const text = unservedText(route, feature);
  if (text === undefined) reply(404, `${route} is not served by Warren`);
  else reply(501, text);
}

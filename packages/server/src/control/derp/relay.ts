/**
 * The embedded DERP relay: devices that cannot reach each other directly send their (already
 * end-to-end encrypted) WireGuard and disco packets here, addressed by the recipient's node key,
 * and the relay passes them on. It speaks Tailscale's DERP protocol version 2 as
 * `tailscale.com/derp` clients expect it:
 *
 *   relay → client   ServerKey   magic ‖ relay public key
 *   client → relay   ClientInfo  client node key ‖ box(JSON)   (proves it holds the node key)
 *   relay → client   ServerInfo  box({"version":2})
 *   then             SendPacket → RecvPacket to the addressee, Ping → Pong, KeepAlive, PeerGone
 *
 * Only node keys that Warren has enrolled may connect (`admit`), so the relay is not an open
 * proxy for the internet. Regional meshing of several relays is not supported: frames that only
 * mesh peers may send (ForwardPacket, WatchConns, ClosePeer) close the connection, as they do on
 * Tailscale's relays for clients without the mesh key.
 */
import type { KeyObject } from 'node:crypto';
import type { Duplex } from 'node:stream';
import {
  encodeFrame,
  type Frame,
  FrameReader,
  FrameTooLargeError,
  FrameType,
  MAGIC,
  MAX_PACKET_SIZE,
  PeerGoneReason,
  PROTOCOL_VERSION,
} from './frames.js';
import { KEY_LENGTH, open, privateKeyFromRaw, rawPublicKey, seal } from './nacl-box.js';

/**
 * The largest ClientInfo accepted before the client is trusted. What `tailscale.com/derp` clients
 * send is their key, a nonce, the box overhead and a JSON object of five short fields (version,
 * mesh key, ping acks, prober flag, app name): a few hundred bytes. Tailscale's relays allow
 * 256 KiB here, which across thousands of connections that never finish their hello is gigabytes
 * held until the handshake timeout; 4 KiB leaves ample room for longer app names and new fields
 * while a stalled hello costs no more than a socket.
 */
export const MAX_CLIENT_INFO = 4 << 10;
/** After the handshake: a packet and its addressee; pings are smaller. */
const MAX_FRAME = MAX_PACKET_SIZE + KEY_LENGTH;
const MAX_PING = 1000;

export interface RelayLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface RelayOptions {
  /** The relay's X25519 private key, 32 bytes (the same on every instance sharing a database). */
  privateKey: Uint8Array;
  /** Whether a node key (`nodekey:` + 64 hex digits) may use the relay. */
  admit: (nodeKey: string) => Promise<boolean>;
  log: RelayLogger;
  /** How long a new connection has to prove its key (default 10 s). */
  handshakeTimeoutMs?: number;
  /** Keep-alive period, as Tailscale's relays (default 60 s). */
  keepAliveMs?: number;
  /** Bytes that may wait in one client's socket before packets to it are dropped (default 4 MiB). */
  maxQueuedBytes?: number;
}

/** One client connection, after its handshake. */
interface Client {
  readonly key: string;
  readonly socket: Duplex;
  lastWrite: number;
  /** Node keys this client sent packets to (so its entries in `sentTo` go when it does). */
  readonly sentKeys: Set<string>;
  /** PeerGone notices allowed in the current second: at most three, as Tailscale's relays. */
  peerGoneBudget: { second: number; left: number };
}

export interface RelayStats {
  clients: number;
  packetsRelayed: number;
  packetsDropped: number;
}

export class DerpRelay {
  readonly publicKey: Buffer;
  private readonly privateKey: KeyObject;
  /** Connections by node key (hex); the last one to connect is the one packets go to. */
  private readonly clients = new Map<string, Client[]>();
  /** For each node key, the clients that sent to it: told `PeerGone` when it disconnects. */
  private readonly sentTo = new Map<string, Set<Client>>();
  private readonly sockets = new Set<Duplex>();
  private readonly keepAliveTimer: NodeJS.Timeout;
  private readonly handshakeTimeoutMs: number;
  private readonly keepAliveMs: number;
  private readonly maxQueuedBytes: number;
  private closed = false;
  readonly stats: RelayStats = { clients: 0, packetsRelayed: 0, packetsDropped: 0 };

  constructor(private readonly options: RelayOptions) {
    this.privateKey = privateKeyFromRaw(options.privateKey);
    this.publicKey = rawPublicKey(this.privateKey);
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? 10_000;
    this.keepAliveMs = options.keepAliveMs ?? 60_000;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 4 << 20;
    // One sweep for every connection instead of a timer each: thousands of devices stay connected.
    this.keepAliveTimer = setInterval(() => this.sendKeepAlives(), Math.max(1000, this.keepAliveMs / 4));
    this.keepAliveTimer.unref();
  }

  /**
   * Takes over a socket whose HTTP upgrade has been answered (or that asked for a fast start),
   * with any bytes that arrived after the request.
   */
  accept(socket: Duplex, head: Buffer): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    const reader = new FrameReader(MAX_CLIENT_INFO);
    let client: Client | undefined;
    /** Frames that arrived while the client's key was being checked. */
    let waiting: Frame[] | undefined;

    const handshake = setTimeout(() => socket.destroy(), this.handshakeTimeoutMs);
    const fail = (reason: string, error?: unknown) => {
      this.options.log.info({ reason, err: error, client: client?.key }, 'DERP connection closed');
      socket.destroy();
    };
    const handle = (frame: Frame) => {
      if (client) this.handleFrame(client, frame, fail);
    };

    socket.on('data', (chunk: Buffer) => {
      let frames: Frame[];
      try {
        frames = reader.push(chunk);
      } catch (error) {
        fail(error instanceof FrameTooLargeError ? 'frame too large' : 'unreadable frame', error);
        return;
      }
      if (client) {
        for (const frame of frames) handle(frame);
        return;
      }
      if (waiting) {
        waiting.push(...frames);
        return;
      }
      const [first, ...rest] = frames;
      if (!first) return;
      if (first.type !== FrameType.clientInfo) return fail('first frame is not ClientInfo');
      waiting = rest;
      socket.pause();
      this.admitClient(first.body).then(
        (key) => {
          clearTimeout(handshake);
          if (!key) return fail('node key not admitted');
          if (socket.destroyed) return;
          reader.limit = MAX_FRAME;
          client = this.register(key, socket);
          const pending = waiting ?? [];
          waiting = undefined;
          for (const frame of pending) handle(frame);
          socket.resume();
        },
        (error) => fail('admission failed', error),
      );
    });
    // The HTTP server's sockets are half-open capable: a client that hangs up must be let go of.
    socket.on('end', () => socket.destroy());
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      clearTimeout(handshake);
      this.sockets.delete(socket);
      if (client) this.unregister(client);
    });

    socket.write(encodeFrame(FrameType.serverKey, MAGIC, this.publicKey));
    if (head.length > 0) socket.emit('data', head);
  }

  /** Connected clients by node key (`nodekey:…`), for the admin and for tests. */
  connectedKeys(): string[] {
    return [...this.clients.keys()].map((hex) => `nodekey:${hex}`);
  }

  /** Disconnects every connection of a node key (a device deleted or expired). */
  disconnect(nodeKey: string): void {
    const hex = nodeKey.replace(/^nodekey:/, '');
    for (const client of this.clients.get(hex) ?? []) client.socket.destroy();
  }

  /** Tells every client the relay is restarting (reconnect soon), then closes them. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepAliveTimer);
    const restarting = Buffer.alloc(8);
    restarting.writeUInt32BE(1000, 0); // reconnect in 1 s
    restarting.writeUInt32BE(60_000, 4); // and keep trying for a minute
    const frame = encodeFrame(FrameType.restarting, restarting);
    for (const socket of this.sockets) socket.end(frame);
  }

  /** Opens a ClientInfo; the client's key in hex when it proved it and may connect. */
  private async admitClient(body: Buffer): Promise<string | undefined> {
    if (body.length < KEY_LENGTH) return undefined;
    const clientKey = body.subarray(0, KEY_LENGTH);
    const message = open(body.subarray(KEY_LENGTH), this.privateKey, clientKey);
    if (!message) return undefined;
    try {
      const info: unknown = JSON.parse(message.toString('utf8'));
      if (typeof info !== 'object' || info === null || Array.isArray(info)) return undefined;
    } catch {
      return undefined;
    }
    const hex = clientKey.toString('hex');
    return (await this.options.admit(`nodekey:${hex}`)) ? hex : undefined;
  }

  private register(key: string, socket: Duplex): Client {
    const client: Client = {
      key,
      socket,
      lastWrite: Date.now(),
      sentKeys: new Set(),
      peerGoneBudget: { second: 0, left: 0 },
    };
    const connections = this.clients.get(key);
    if (connections) connections.push(client);
    else this.clients.set(key, [client]);
    this.stats.clients += 1;
    const info = Buffer.from(JSON.stringify({ version: PROTOCOL_VERSION }));
    this.write(client, encodeFrame(FrameType.serverInfo, seal(info, this.privateKey, Buffer.from(key, 'hex'))));
    return client;
  }

  private unregister(client: Client): void {
    const connections = this.clients.get(client.key);
    if (!connections) return;
    const index = connections.indexOf(client);
    if (index < 0) return;
    connections.splice(index, 1);
    this.stats.clients -= 1;
    for (const key of client.sentKeys) this.sentTo.get(key)?.delete(client);
    if (connections.length > 0) return; // an older connection of the same key takes over
    this.clients.delete(client.key);
    // Those who sent to this key drop their route to it now rather than at their next timeout.
    const gone = encodeFrame(
      FrameType.peerGone,
      Buffer.from(client.key, 'hex'),
      Buffer.of(PeerGoneReason.disconnected),
    );
    for (const sender of this.sentTo.get(client.key) ?? []) this.write(sender, gone);
    this.sentTo.delete(client.key);
  }

  private handleFrame(client: Client, frame: Frame, fail: (reason: string) => void): void {
    switch (frame.type) {
      case FrameType.sendPacket:
        this.relay(client, frame.body, fail);
        break;
      case FrameType.ping:
        if (frame.body.length < 8 || frame.body.length > MAX_PING) fail('bad ping');
        else this.write(client, encodeFrame(FrameType.pong, frame.body.subarray(0, 8)));
        break;
      case FrameType.forwardPacket:
      case FrameType.watchConns:
      case FrameType.closePeer:
        fail('mesh frames need a mesh key');
        break;
      case FrameType.clientInfo:
        fail('second ClientInfo');
        break;
      default:
        // NotePreferred, Pong, KeepAlive carry nothing the relay acts on; unknown frames are
        // skipped, as newer clients may send more.
        break;
    }
  }

  private relay(sender: Client, body: Buffer, fail: (reason: string) => void): void {
    if (body.length < KEY_LENGTH || body.length > MAX_FRAME) {
      fail('bad packet frame');
      return;
    }
    const to = body.subarray(0, KEY_LENGTH);
    const connections = this.clients.get(to.toString('hex'));
    const addressee = connections?.[connections.length - 1];
    if (!addressee) {
      this.stats.packetsDropped += 1;
      this.notePeerGone(sender, to);
      return;
    }
    if (addressee.socket.writableLength > this.maxQueuedBytes) {
      this.stats.packetsDropped += 1; // a slow reader loses packets rather than the relay memory
      return;
    }
    let senders = this.sentTo.get(addressee.key);
    if (!senders) {
      senders = new Set();
      this.sentTo.set(addressee.key, senders);
    }
    senders.add(sender);
    sender.sentKeys.add(addressee.key);
    this.stats.packetsRelayed += 1;
    this.write(addressee, encodeFrame(FrameType.recvPacket, Buffer.from(sender.key, 'hex'), body.subarray(KEY_LENGTH)));
  }

  /** Tells a sender its addressee is not here, at most three times a second. */
  private notePeerGone(sender: Client, key: Buffer): void {
    const second = Math.floor(Date.now() / 1000);
    const budget = sender.peerGoneBudget;
    if (budget.second !== second) {
      budget.second = second;
      budget.left = 3;
    }
    if (budget.left === 0) return;
    budget.left -= 1;
    this.write(sender, encodeFrame(FrameType.peerGone, key, Buffer.of(PeerGoneReason.notHere)));
  }

  private write(client: Client, frame: Buffer): void {
    if (client.socket.destroyed) return;
    client.lastWrite = Date.now();
    client.socket.write(frame);
  }

  private sendKeepAlives(): void {
    const due = Date.now() - this.keepAliveMs;
    const frame = encodeFrame(FrameType.keepAlive);
    for (const connections of this.clients.values()) {
      for (const client of connections) if (client.lastWrite <= due) this.write(client, frame);
    }
  }
}

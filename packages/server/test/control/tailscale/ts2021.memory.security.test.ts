/**
 * Memory a hostile device can make the control server hold, measured in a server process of its
 * own (../server-process.ts). Before any authentication a connection can complete a handshake
 * (a replayed initiation is enough) and then send records in fragments, records longer than
 * the protocol allows, or HTTP/2 streams whose bodies never end. The limits stated here:
 *  - a record longer than 4096 bytes closes the connection at its header;
 *  - a connection holds at most one unfinished record (4 KiB);
 *  - a channel holds at most MAX_CHANNEL_BODIES of request bodies over at most
 *    MAX_CHANNEL_STREAMS streams; past that the whole channel is closed.
 * With those, the server's heap and buffers grow by less than PER_CONNECTION per hostile
 * connection, and an honest device registers and receives its map meanwhile.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { ClientHttp2Session } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ControlChannel,
  type MapStream,
  randomTailscaleNodeKey,
} from '../../../src/control/tailscale/control-client.js';
import { x25519Generate } from '../../../src/control/tailscale/noise-crypto.js';
import { initiate, RESPONSE_LEN } from '../../../src/control/tailscale/noise-handshake.js';
import { MAX_BODY, MAX_CHANNEL_BODIES, MAX_CHANNEL_STREAMS } from '../../../src/control/tailscale/ts2021.js';
import { controlClient, mapRequest, registerWithKey, serverKey } from './ts-client.js';

/** Heap and buffers one hostile connection may cost the server, held or closed. */
const PER_CONNECTION = 128 * 1024;
const HELD = 300;
const OVERSIZED = 200;
const FLOODING = 4;
const STREAMING = 60;

interface Memory {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  rss: number;
  /** The peak resident size since the previous measurement (Linux). */
  peakRss?: number;
}

let child: ChildProcess;
let lines: Interface;
let url: string;
let apiKey: string;
const replies: Array<(line: string) => void> = [];

beforeAll(async () => {
  const script = join(import.meta.dirname, '..', 'server-process.ts');
  child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', '--conditions=@warren/source', script], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  lines.on('line', (line) => replies.shift()?.(line));
  const first = await next();
  ({ url, apiKey } = JSON.parse(first) as { url: string; apiKey: string });
}, 60_000);

afterAll(async () => {
  child.stdin?.write('exit\n');
  await new Promise((resolve) => child.once('exit', resolve));
});

const next = () => new Promise<string>((resolve) => replies.push(resolve));

async function memory(): Promise<Memory> {
  const reply = next();
  child.stdin?.write('memory\n');
  return JSON.parse(await reply) as Memory;
}
const held = (m: Memory) => m.heapUsed + m.external;

/** Growth of held memory since `before`, measured until under `bound` or for five seconds. */
async function settled(before: Memory, bound: number): Promise<number> {
  const until = Date.now() + 5_000;
  for (;;) {
    const grown = held(await memory()) - held(before);
    if (grown < bound || Date.now() > until) return grown;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const upgrade = (handshake: string) =>
  'POST /ts2021 HTTP/1.1\r\nHost: warren.test\r\nUpgrade: tailscale-control-protocol\r\nConnection: upgrade\r\n' +
  `X-Tailscale-Handshake: ${handshake}\r\nContent-Length: 0\r\n\r\n`;

/** A raw connection past the handshake (a replayed initiation): the server now reads records. */
async function pastHandshake(initiation: Buffer): Promise<{ socket: Socket; closed: Promise<void> }> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(upgrade(initiation.toString('base64')));
  await new Promise<void>((resolve, reject) => {
    let got = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      const end = got.indexOf('\r\n\r\n');
      if (end >= 0 && got.length >= end + 4 + RESPONSE_LEN) {
        socket.off('data', onData);
        socket.resume();
        resolve();
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error('closed during the handshake')));
  });
  return { socket, closed };
}

async function authKey(): Promise<string> {
  const res = await fetch(`${url}/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'auth', reusable: true }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { key: string }).key;
}

/** An honest device: registers, then receives its first map. */
async function honestDevice(key: string, hostname: string): Promise<void> {
  const client = await controlClient(url);
  try {
    const { status, nodeKey } = await registerWithKey(client, key, hostname);
    expect(status).toBe(200);
    const stream = client.stream(mapRequest(nodeKey, true));
    await stream.next(1);
    expect(stream.messages[0]?.Node).toBeTruthy();
    stream.close();
  } finally {
    client.close();
  }
}

describe('memory of honest connected devices', () => {
  it('keeps no buffer of a map request while its stream is open', async () => {
    const key = await authKey();
    await honestDevice(key, 'warm-streams');
    const before = await memory();
    const devices: Array<{ channel: ControlChannel; stream: MapStream }> = [];
    const noise = await serverKey(url);
    for (let i = 0; i < STREAMING; i++) {
      const channel = await ControlChannel.open(url, noise);
      const nodeKey = randomTailscaleNodeKey();
      await channel.register({ NodeKey: nodeKey, Auth: { AuthKey: key }, Hostinfo: { Hostname: `streaming-${i}` } });
      await new Promise<void>((resolve) => {
        devices.push({ channel, stream: channel.map(mapRequest(nodeKey, true), () => resolve()) });
      });
    }
    // A request body is a slice of an 8 KiB buffer pool: kept by its stream, it keeps the pool.
    // What an open stream still holds is its socket's and sessions' small buffers.
    const bound = STREAMING * 2 * 1024;
    let grown = Number.POSITIVE_INFINITY;
    for (const until = Date.now() + 5_000; grown >= bound && Date.now() < until; ) {
      grown = (await memory()).arrayBuffers - before.arrayBuffers;
      if (grown >= bound) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(grown / STREAMING).toBeLessThan(2 * 1024);
    // Nor does a session keep the header tables of HPACK: the client is told to keep none.
    const h2 = (devices[0].channel as unknown as { h2: ClientHttp2Session }).h2;
    expect(h2.remoteSettings.headerTableSize).toBe(0);
    for (const d of devices) {
      d.stream.close();
      d.channel.close();
    }
  }, 120_000);
});

describe('memory under hostile control connections', () => {
  it('holds fragmented records within a record each, and closes oversized ones at their header', async () => {
    const key = await authKey();
    const initiation = initiate(x25519Generate(), await serverKey(url), 142).initiation;
    await honestDevice(key, 'warm');
    const before = await memory();

    // Every connection sends all of a maximal record but its last byte, in fragments.
    const fragmented = [];
    for (let i = 0; i < HELD; i++) {
      const c = await pastHandshake(initiation);
      c.socket.write(Buffer.from([4, 0x0f, 0xfd]));
      for (let at = 0; at < 4093 - 1; at += 1024) c.socket.write(Buffer.alloc(Math.min(1024, 4093 - 1 - at), i));
      fragmented.push(c);
    }
    // Records announcing more than the protocol's 4096 bytes, followed by 64 KiB: closed.
    const oversized = [];
    for (let i = 0; i < OVERSIZED; i++) {
      const c = await pastHandshake(initiation);
      c.socket.write(Buffer.from([4, 0xff, 0xff]));
      c.socket.write(Buffer.alloc(64 * 1024, 1));
      oversized.push(c);
    }
    await Promise.all(oversized.map((c) => c.closed));

    await honestDevice(key, 'during');
    const bound = (HELD + OVERSIZED) * PER_CONNECTION;
    const grown = await settled(before, bound);
    expect(grown).toBeLessThan(bound);
    // The fragmented ones are still open (the server waits for their last byte).
    expect(fragmented.every((c) => !c.socket.destroyed)).toBe(true);
    for (const c of fragmented) c.socket.destroy();
  }, 120_000);

  it('closes a channel whose streams hold more request data than its budget, whatever the streams', async () => {
    const key = await authKey();
    const before = await memory();
    // Each channel opens its every stream and sends on each a body just under the largest one
    // request may have, never ending it: sixteen times the channel's budget in all, which the
    // server would hold if only each request were limited.
    const perStream = MAX_BODY - 1024;
    const channels = await Promise.all(
      Array.from({ length: FLOODING }, async () => {
        const channel = await ControlChannel.open(url, await serverKey(url));
        // The raw HTTP/2 session, to send what no client method sends: bodies without an end.
        const h2 = (channel as unknown as { h2: ClientHttp2Session }).h2;
        const closed = new Promise<void>((resolve) => h2.once('close', () => resolve()));
        for (let s = 0; s < MAX_CHANNEL_STREAMS; s++) {
          const req = h2.request({ ':method': 'POST', ':path': '/machine/map', 'content-type': 'application/json' });
          req.on('error', () => {});
          req.write(Buffer.alloc(perStream, 0x20));
        }
        return { channel, closed };
      }),
    );
    await Promise.all(channels.map((c) => c.closed));
    // While they flooded, the server never held much more than their budgets (the slack: the
    // records being decrypted, socket buffers, the HTTP/2 sessions).
    const flooded = await memory();
    if (flooded.peakRss !== undefined) {
      expect(flooded.peakRss - before.rss).toBeLessThan(FLOODING * (MAX_CHANNEL_BODIES + 8 * 1024 * 1024));
    }
    await honestDevice(key, 'after-flood');
    // Closed connections give their buffers back as their handles close: within a few seconds.
    const grown = await settled(before, FLOODING * PER_CONNECTION);
    expect(grown).toBeLessThan(FLOODING * PER_CONNECTION);
    for (const c of channels) c.channel.close();
    // Less than the channels' idle limit (two minutes): only the budget can have closed them.
  }, 60_000);
});

/**
 * A real server per test and Tailscale control clients joined to it with auth keys, for the
 * protocol's test files: `const t = protocolFixture();` installs the hooks.
 */
import { afterEach, beforeEach, expect } from 'vitest';
import { json, startServer, type TestServer } from '../../harness.js';
import { type ControlClient, controlClient, registerWithKey } from './ts-client.js';

export interface ProtocolFixture {
  readonly server: TestServer;
  /** A reusable auth key, with any other fields of POST /v1/keys. */
  authKey(body?: Record<string, unknown>): Promise<string>;
  /** A new machine registered with `key` as `hostname`, and the register answer. */
  joined(
    key: string,
    hostname: string,
  ): Promise<{ client: ControlClient; nodeKey: string; answer: Record<string, unknown> }>;
  /** The id of the device named `name` in /v1. */
  deviceId(name: string): Promise<string>;
}

export function protocolFixture(): ProtocolFixture {
  let server: TestServer | undefined;
  const clients: ControlClient[] = [];
  beforeEach(async () => {
    server = await startServer();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server?.close();
  });
  const current = () => {
    if (!server) throw new Error('no server: use the fixture inside a test');
    return server;
  };
  return {
    get server() {
      return current();
    },
    async authKey(body = {}) {
      const res = await current().call('POST', '/v1/keys', { body: { type: 'auth', reusable: true, ...body } });
      expect(res.status).toBe(201);
      return (await json(res)).key;
    },
    async joined(key, hostname) {
      const client = await controlClient(current().url);
      clients.push(client);
      const { status, nodeKey, answer } = await registerWithKey(client, key, hostname);
      expect(status).toBe(200);
      return { client, nodeKey, answer };
    },
    async deviceId(name) {
      const list = await json(await current().call('GET', '/v1/devices'));
      return list.devices.find((d: { name: string }) => d.name === name).id;
    },
  };
}

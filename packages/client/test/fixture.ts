/** A fresh test server and a client on its network's `all` key: the start of every client suite. */
import { startServer, type TestServer } from '@warren/server/testing';
import { Warren } from '../src/index.js';

export async function startWithClient(): Promise<{ server: TestServer; warren: Warren }> {
  const server = await startServer();
  return { server, warren: new Warren({ url: server.url, apiKey: server.apiKey }) };
}

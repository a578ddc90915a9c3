/**
 * Text from the server never reaches the terminal raw: control characters in a device's
 * hostname or OS, a key's description or an error's detail are shown as visible escapes,
 * while --json prints the API's body exactly.
 */

import { json, newNodeKey, startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visible } from '../src/commands/output.js';
import { envOf, warren } from './run.js';

const HOSTNAME = 'evil\u001b[2J\nrow';
const OS = 'linux\u001b]0;pwned\u0007';
const DESCRIPTION = 'ci\r\u001b[31mfake\u202e\u0085';
/** What no terminal-bound output may hold: C0/C1 controls (bar the line ends), DEL, bidi overrides. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('warren: control characters from the server', () => {
  let server: TestServer;
  let env: Record<string, string>;
  let deviceId: string;
  let keyId: string;
  beforeAll(async () => {
    server = await startServer();
    env = envOf(server);
    const authKey = await json(await server.call('POST', '/v1/keys', { body: { description: DESCRIPTION } }));
    keyId = authKey.id;
    const res = await server.call('POST', '/v1/node/register', {
      key: authKey.key,
      body: { hostname: HOSTNAME, os: OS, nodeKey: newNodeKey() },
    });
    expect(res.status).toBe(201);
    deviceId = (await json(res)).device.id;
  });
  afterAll(() => server.close());

  it('escapes them one by one', () => {
    expect(visible(HOSTNAME)).toBe('evil\\x1b[2J\\nrow');
    expect(visible(OS)).toBe('linux\\x1b]0;pwned\\x07');
    expect(visible(DESCRIPTION)).toBe('ci\\r\\x1b[31mfake\\u202e\\x85');
    expect(visible('tab\there\u007f\u0000')).toBe('tab\\there\\x7f\\x00');
    expect(visible('plain ascii, ünïcode ✓ and \\ stay')).toBe('plain ascii, ünïcode ✓ and \\ stay');
  });

  it('shows them escaped in tables and records', async () => {
    const cases = [
      [['devices', 'list'], ['linux\\x1b]0;pwned\\x07']],
      [
        ['devices', 'get', deviceId],
        ['evil\\x1b[2J\\nrow', 'linux\\x1b]0;pwned\\x07'],
      ],
      [['keys', 'list'], ['ci\\r\\x1b[31mfake\\u202e\\x85']],
      [['keys', 'get', keyId], ['ci\\r\\x1b[31mfake\\u202e\\x85']],
    ] as const;
    for (const [args, shown] of cases) {
      const res = await warren([...args], env);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout, args.join(' ')).not.toMatch(RAW);
      for (const text of shown) expect(res.stdout, args.join(' ')).toContain(text);
    }
    // one record, one line per field: the newline in the hostname did not make a second line
    const get = await warren(['devices', 'get', deviceId], env);
    expect(get.stdout.split('\n').filter((l) => l.startsWith('hostname'))).toEqual([
      expect.stringMatching(/^hostname +evil\\x1b\[2J\\nrow$/),
    ]);
  });

  it('prints --json exactly', async () => {
    const res = await warren(['devices', 'get', deviceId, '--json'], env);
    expect(res.code).toBe(0);
    const device = JSON.parse(res.stdout);
    expect(device).toMatchObject({ hostname: HOSTNAME, os: OS });
    expect(JSON.parse((await warren(['keys', 'get', keyId, '--json'], env)).stdout).description).toBe(DESCRIPTION);
  });

  it('escapes what an error detail echoes back', async () => {
    // no device has this name: the message names the reference it was given
    const res = await warren(['devices', 'get', 'no\u001b[31mne'], env);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('no\\x1b[31mne');
    expect(res.stderr).not.toMatch(RAW);
    expect(res.stderr.split('\n')).toHaveLength(2);
  });
});

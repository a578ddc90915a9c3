/**
 * Message framing as RFC 9112 asks a server to judge it (§6.1–6.3, §7.1, §5.2): a body length
 * that is not one number, a length beside a transfer coding, a broken chunked body, a header
 * continued on the next line (obsolete folding). Each is a request smuggling vector when a
 * proxy in front reads the framing differently, so each is refused with a 400 problem carrying
 * a request id, the connection is closed (what follows it cannot be trusted to be a request),
 * and nothing is created. Written byte for byte on a raw socket, as an attacker would send it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';
import { rawSocket } from './raw-http.js';

const KEY_BODY = '{"type":"api","name":"smuggled","scopes":["read"]}';

describe('request framing', () => {
  let server: TestServer;
  let head: string[];
  beforeAll(async () => {
    server = await startServer();
    head = [
      'POST /v1/keys HTTP/1.1',
      'Host: warren.test',
      `Authorization: Bearer ${server.apiKey}`,
      'Content-Type: application/json',
    ];
  });
  afterAll(() => server.close());

  const chunked = (body: string) => `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;

  const cases: Array<[string, string[], string]> = [
    ['a Content-Length that is not a number', ['Content-Length: abc'], KEY_BODY],
    ['a negative Content-Length', ['Content-Length: -1'], KEY_BODY],
    ['a Content-Length with a sign', [`Content-Length: +${KEY_BODY.length}`], KEY_BODY],
    ['a Content-Length in hexadecimal', ['Content-Length: 0x25'], KEY_BODY],
    ['two numbers in one Content-Length', [`Content-Length: ${KEY_BODY.length} 5`], KEY_BODY],
    ['a list of Content-Lengths', [`Content-Length: ${KEY_BODY.length}, 5`], KEY_BODY],
    ['two Content-Length headers that differ', [`Content-Length: ${KEY_BODY.length}`, 'Content-Length: 5'], KEY_BODY],
    [
      'Content-Length and Transfer-Encoding together',
      [`Content-Length: ${KEY_BODY.length}`, 'Transfer-Encoding: chunked'],
      chunked(KEY_BODY),
    ],
    [
      'Transfer-Encoding and Content-Length together',
      ['Transfer-Encoding: chunked', `Content-Length: ${KEY_BODY.length}`],
      chunked(KEY_BODY),
    ],
    ['a chunk size that is not hexadecimal', ['Transfer-Encoding: chunked'], `zz\r\n${KEY_BODY}\r\n0\r\n\r\n`],
    ['a chunk size past 64 bits', ['Transfer-Encoding: chunked'], `1${'0'.repeat(20)}\r\n${KEY_BODY}\r\n0\r\n\r\n`],
    ['a chunk longer than its size', ['Transfer-Encoding: chunked'], `5\r\n${KEY_BODY}\r\n0\r\n\r\n`],
    [
      'a chunk size line ended by a bare LF',
      ['Transfer-Encoding: chunked'],
      `${KEY_BODY.length.toString(16)}\n${KEY_BODY}\r\n0\r\n\r\n`,
    ],
    [
      'a chunk size with a space before it',
      ['Transfer-Encoding: chunked'],
      ` ${KEY_BODY.length.toString(16)}\r\n${KEY_BODY}\r\n0\r\n\r\n`,
    ],
    ['an obsolete folded header', ['X-Note: a', ' folded', `Content-Length: ${KEY_BODY.length}`], KEY_BODY],
    [
      'a folded Content-Type',
      ['Content-Type: application/json;', '\tcharset=utf-8', `Content-Length: ${KEY_BODY.length}`],
      KEY_BODY,
    ],
    ['a space before the colon', [`Content-Length : ${KEY_BODY.length}`], KEY_BODY],
    ['a header line without a colon', ['X-Note', `Content-Length: ${KEY_BODY.length}`], KEY_BODY],
    ['a header name with a space', ['X Note: a', `Content-Length: ${KEY_BODY.length}`], KEY_BODY],
  ];

  it.each(cases)(
    'refuses %s with a 400 problem, closes the connection and creates nothing',
    async (_, headers, body) => {
      const keysBefore = (await json(await server.call('GET', '/v1/keys'))).keys.length;
      // A second, well-formed request behind the bad one: it must not be answered (no smuggling).
      const next = `GET /v1/keys HTTP/1.1\r\nHost: warren.test\r\nAuthorization: Bearer ${server.apiKey}\r\n\r\n`;
      const res = await rawSocket(server.url, `${[...head, ...headers].join('\r\n')}\r\n\r\n${body}${next}`);
      expect(res.status, res.raw.slice(0, 300)).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const problem = JSON.parse(res.body);
      expect(problem).toMatchObject({ status: 400, code: 'invalid_request' });
      expect(problem.requestId).toMatch(/^req_[0-9a-f]{24}$/);
      expect(res.headers['x-request-id']).toBe(problem.requestId);
      expect(res.raw.match(/^HTTP\/1\.1 /gm)).toHaveLength(1);
      expect((await json(await server.call('GET', '/v1/keys'))).keys.length).toBe(keysBefore);
    },
  );

  it('still serves well-framed bodies: a length, and chunks with extensions and trailers', async () => {
    for (const [headers, body] of [
      [[`Content-Length: ${KEY_BODY.length}`], KEY_BODY],
      [
        ['Transfer-Encoding: chunked'],
        `${KEY_BODY.length.toString(16)};ext=1\r\n${KEY_BODY}\r\n0\r\nX-Trailer: a\r\n\r\n`,
      ],
    ] as const) {
      const res = await rawSocket(
        server.url,
        `${[...head, ...headers, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`,
      );
      expect(res.status, res.body).toBe(201);
    }
  });
});

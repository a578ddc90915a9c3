/**
 * Webhook targets that hide a forbidden IPv4 address inside an IPv6 one (mapped, translated,
 * compatible, NAT64, 6to4, Teredo), and IANA's other special-purpose ranges: refused when the
 * webhook is created (sent over a raw socket) and again at delivery, after the name resolves.
 */
import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isForbiddenAddress } from '../../src/modules/webhooks/forbidden-addresses.js';
import { ForbiddenTarget, guardedLookup } from '../../src/modules/webhooks/target-guard.js';
import { json, startServer, type TestServer } from '../harness.js';
import { rawSocket } from '../http/raw-http.js';

const hex = (v4: string) => {
  const [a, b, c, d] = v4.split('.').map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
};
const inverted = (v4: string) =>
  hex(
    v4
      .split('.')
      .map((o) => String(255 - Number(o)))
      .join('.'),
  );

/** Every IPv6 spelling that carries `v4`. */
function carriers(v4: string): string[] {
  const [hi, lo] = hex(v4);
  const teredo = (server: string, client: string) =>
    `2001:0:${hex(server).join(':')}:0:0:${inverted(client).join(':')}`;
  return [
    `::ffff:${v4}`,
    `::ffff:${hi}:${lo}`,
    `0:0:0:0:0:FFFF:${hi}:${lo}`,
    `::ffff:0:${v4}`,
    `::${v4}`,
    `::${hi}:${lo}`,
    `64:ff9b::${v4}`,
    `64:ff9b::${hi}:${lo}`,
    `2002:${hi}:${lo}::`,
    `2002:${hi}:${lo}:1::5`,
    // Teredo: the server's address in bits 32-63, the client's inverted in the last 32.
    teredo(v4, '8.8.8.8'),
    teredo('8.8.8.8', v4),
  ];
}

const FORBIDDEN_V4 = ['127.0.0.1', '10.0.0.1', '169.254.169.254', '100.64.0.1', '192.168.1.1', '0.0.0.0', '172.16.0.1'];

describe('addresses a webhook may not reach', () => {
  it('judges an IPv4 address carried in IPv6 by the IPv4 rules, in every form', () => {
    for (const v4 of FORBIDDEN_V4) {
      for (const address of carriers(v4)) expect(isForbiddenAddress(address), `${address} (${v4})`).toBe(true);
    }
    // A public address carried the same ways is public (Teredo: both ends public).
    for (const address of carriers('8.8.8.8')) expect(isForbiddenAddress(address), address).toBe(false);
  });

  it('refuses the other special-purpose ranges of IANA’s registries', () => {
    for (const address of [
      'fec0::1', // deprecated site-local
      'FEC0:0:0:0:0:0:0:1',
      '64:ff9b:1::a00:1', // local-use NAT64
      '100::1', // discard-only
      '100:0:0:1::1', // dummy prefix
      '2001:2::1', // benchmarking
      '2001:10::1', // ORCHID
      '2001:1::1',
      '2001:db8::1', // documentation
      '3fff::1', // documentation
      '5f00::1', // SRv6 SIDs
      'fc00::1',
      'fe80::1%eth0', // link-local with a zone
      'ff02::1',
      '192.88.99.1', // 6to4 relay anycast
      '198.18.0.1',
      '240.0.0.1',
      '255.255.255.255',
      'not an address',
    ]) {
      expect(isForbiddenAddress(address), address).toBe(true);
    }
    for (const address of ['2606:4700:4700::1111', '2a00:1450:4001::1', '93.184.216.34']) {
      expect(isForbiddenAddress(address), address).toBe(false);
    }
  });

  it('refuses a name that resolves to such an address at delivery', async () => {
    const lookup = guardedLookup(false);
    for (const name of ['::ffff:127.0.0.1', '::127.0.0.1', '2002:7f00:1::', '64:ff9b::a9fe:a9fe', 'fec0::1']) {
      const error = await new Promise<Error | null>((resolve) =>
        lookup(name, { all: true }, (err: Error | null, _addresses: LookupAddress[] | string) => resolve(err)),
      );
      expect(error, name).toBeInstanceOf(ForbiddenTarget);
      expect(error?.message).toContain('webhooks may not reach');
    }
    const allowed = await new Promise<Error | null>((resolve) =>
      guardedLookup(true)('::ffff:127.0.0.1', { all: true }, (err: Error | null) => resolve(err)),
    );
    expect(allowed).toBeNull();
  });
});

/**
 * IANA's IPv4 and IPv6 special-purpose address registries (and the multicast and deprecated
 * site-local blocks of the address architecture), entry by entry: whether Warren refuses the
 * block. Every block not globally reachable is refused; the few the registry marks globally
 * reachable are allowed, except the anycast service addresses inside 192.0.0.0/24 and
 * 2001:1::/48, which no webhook has reason to reach. The IPv4-carrying blocks are judged by
 * what they carry (above) and are not listed here.
 */
const REGISTRY: Array<[block: string, refused: boolean]> = [
  ['0.0.0.0/8', true],
  ['10.0.0.0/8', true],
  ['100.64.0.0/10', true],
  ['127.0.0.0/8', true],
  ['169.254.0.0/16', true],
  ['172.16.0.0/12', true],
  ['192.0.0.0/24', true],
  ['192.0.0.9/32', true],
  ['192.0.0.10/32', true],
  ['192.0.0.170/31', true],
  ['192.0.2.0/24', true],
  ['192.31.196.0/24', false], // AS112-v4
  ['192.52.193.0/24', false], // AMT
  ['192.88.99.0/24', true],
  ['192.168.0.0/16', true],
  ['192.175.48.0/24', false], // direct delegation AS112
  ['198.18.0.0/15', true],
  ['198.51.100.0/24', true],
  ['203.0.113.0/24', true],
  ['224.0.0.0/4', true],
  ['240.0.0.0/4', true],
  ['255.255.255.255/32', true],
  ['::/128', true],
  ['::1/128', true],
  ['64:ff9b:1::/48', true],
  ['100::/64', true],
  ['100:0:0:1::/64', true],
  ['2001:1::1/128', true],
  ['2001:1::2/128', true],
  ['2001:1::3/128', true],
  ['2001:2::/48', true],
  ['2001:3::/32', false], // AMT
  ['2001:4:112::/48', false], // AS112-v6
  ['2001:5::/32', true], // unassigned within the IETF's 2001::/23
  ['2001:10::/28', true],
  ['2001:20::/28', true],
  ['2001:30::/28', true],
  ['2001:db8::/32', true],
  ['2620:4f:8000::/48', false], // direct delegation AS112
  ['3fff::/20', true],
  ['4000::/3', true], // reserved by the IETF: outside global unicast
  ['5f00::/16', true],
  ['fc00::/7', true],
  ['fe80::/10', true],
  ['fec0::/10', true],
  ['ff00::/8', true],
];

describe('IANA’s special-purpose registries, entry by entry', () => {
  it.each(REGISTRY)('%s: refused %s, at its first and last address', (block, refused) => {
    const family = block.includes(':') ? ipaddr.IPv6 : ipaddr.IPv4;
    const first = family.networkAddressFromCIDR(block).toString();
    const last = family.broadcastAddressFromCIDR(block).toString();
    expect(isForbiddenAddress(first), first).toBe(refused);
    expect(isForbiddenAddress(last), last).toBe(refused);
  });

  it('still allows global unicast next to the refused blocks', () => {
    for (const address of ['2001:4860:4860::8888', '2001:200::1', '2600::1', '1.1.1.1', '223.255.255.1']) {
      expect(isForbiddenAddress(address), address).toBe(false);
    }
  });
});

describe('creating a webhook at such an address', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('is refused with 400 and creates nothing', async () => {
    for (const url of [
      'https://[::127.0.0.1]/',
      'https://[2002:7f00:1::]/',
      'https://[::ffff:a9fe:a9fe]/latest',
      'https://[64:ff9b::7f00:1]/',
      'https://[2001:0:7f00:1::1]/',
      'https://[fec0::1]/',
      'https://[64:ff9b:1::1]/',
    ]) {
      const body = JSON.stringify({ url, events: ['*'] });
      const res = await rawSocket(
        server.url,
        [
          'POST /v1/webhooks HTTP/1.1',
          'Host: warren.test',
          `Authorization: Bearer ${server.apiKey}`,
          'Content-Type: application/json',
          `Content-Length: ${Buffer.byteLength(body)}`,
          'Connection: close',
          '',
          body,
        ].join('\r\n'),
      );
      expect(res.status, `${url}: ${res.body}`).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'invalid_request' });
    }
    expect((await json(await server.call('GET', '/v1/webhooks'))).webhooks).toEqual([]);
  });
});

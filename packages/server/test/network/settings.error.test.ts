/**
 * PATCH /v1/network refuses what its settings cannot mean, each with a problem whose code is
 * stable and whose detail names the field, and changes nothing: durations of another grammar,
 * DNS names that are addresses or written in capitals, resolvers and search domains given twice,
 * and DERP regions whose fields a Tailscale client could not decode (every client of the network
 * decodes the DERP map in each map response, so one bad value would cut them all off).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';

const node = (fields: Record<string, unknown> = {}) => ({
  Name: '1a',
  RegionID: 1,
  HostName: 'derp1.example.com',
  ...fields,
});
const region = (fields: Record<string, unknown> = {}, nodes = [node()]) => ({
  RegionID: 1,
  RegionCode: 'r1',
  Nodes: nodes,
  ...fields,
});

describe('PATCH /v1/network: bad settings', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  const network = async () => json(await server.call('GET', '/v1/network'));

  async function refused(body: unknown, code: string, detail: RegExp) {
    const res = await server.call('PATCH', '/v1/network', { body });
    const problem = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(problem.code, JSON.stringify(body)).toBe(code);
    expect(problem.detail, JSON.stringify(body)).toMatch(detail);
  }

  it('names nodeKeyExpiry in every refusal of a duration it cannot read', async () => {
    const before = await network();
    for (const text of ['-1d', '1.5d', 'abc', '1w', '24h0m0s', '180D', ' 180d', '00', '']) {
      await refused({ nodeKeyExpiry: text }, 'invalid_duration', /^nodeKeyExpiry: /);
    }
    for (const text of ['0s', '0d', '366d', '999999999d']) {
      await refused(
        { nodeKeyExpiry: text },
        'invalid_duration',
        /^nodeKeyExpiry must be 0 \(never\) or from 1s to 365d/,
      );
    }
    await refused({ nodeKeyExpiry: 0 }, 'invalid_duration', /"nodeKeyExpiry"/);
    expect(await network()).toEqual(before);
  });

  it('refuses DNS names that are addresses or not lower case, saying what a name is', async () => {
    const before = await network();
    await refused(
      { dns: { domain: 'Corp.Example' } },
      'invalid_request',
      /"dns\.domain": "Corp\.Example" is not a DNS name: .*lower-case/,
    );
    await refused({ dns: { domain: 'corp.example.' } }, 'invalid_request', /"dns\.domain".* without a trailing dot/);
    await refused({ dns: { domain: '1.2.3.4' } }, 'invalid_request', /"dns\.domain": "1\.2\.3\.4" is not a DNS name/);
    await refused(
      { dns: { searchDomains: ['10.0.0.1'] } },
      'invalid_request',
      /"dns\.searchDomains\.0": "10\.0\.0\.1"/,
    );
    await refused(
      { dns: { extraRecords: [{ name: 'a.123', type: 'A', value: '10.0.0.1' }] } },
      'invalid_request',
      /extraRecords\.0\.name/,
    );
    expect(await network()).toEqual(before);
  });

  it('refuses a resolver or a search domain given twice, and a resolver with an interface zone', async () => {
    const before = await network();
    await refused(
      { dns: { nameservers: ['1.1.1.1', '1.1.1.1'] } },
      'invalid_request',
      /dns\.nameservers: "1\.1\.1\.1" appears twice/,
    );
    await refused(
      { dns: { nameservers: ['2606:4700::1111', '2606:4700:0:0::1111'] } },
      'invalid_request',
      /dns\.nameservers: "2606:4700:0:0::1111" appears twice/,
    );
    await refused(
      { dns: { nameservers: ['fe80::1%eth0'] } },
      'invalid_request',
      /dns\.nameservers: "fe80::1%eth0" is not an IP address \(an interface zone/,
    );
    await refused(
      { dns: { splitDns: { 'corp.example': ['10.0.0.53', '10.0.0.53'] } } },
      'invalid_request',
      /dns\.splitDns\.corp\.example: "10\.0\.0\.53" appears twice/,
    );
    await refused(
      { dns: { searchDomains: ['corp.example', 'corp.example'] } },
      'invalid_request',
      /dns\.searchDomains: "corp\.example" appears twice/,
    );
    expect(await network()).toEqual(before);
  });

  it('refuses DERP fields of the wrong type, fields tailcfg does not have, and bad node addresses', async () => {
    const before = await network();
    const cases: [unknown, string, RegExp][] = [
      [region({}, [node({ DERPPort: '443' })]), 'invalid_request', /DERPPort/],
      [region({}, [node({ DERPPort: 65_536 })]), 'invalid_request', /DERPPort/],
      [region({}, [node({ STUNPort: -2 })]), 'invalid_request', /STUNPort/],
      [region({}, [node({ STUNOnly: 'yes' })]), 'invalid_request', /STUNOnly/],
      [region({}, [node({ CanPort80: 1 })]), 'invalid_request', /CanPort80/],
      [region({ Avoid: 'x' }), 'invalid_request', /Avoid/],
      [region({ Latitude: 'n' }), 'invalid_request', /Latitude/],
      [region({ Longitude: 181 }), 'invalid_request', /Longitude/],
      [region({ Foo: { deep: [1] } }), 'unknown_field', /Foo/],
      [region({}, [node({ Port: 443 })]), 'unknown_field', /Port/],
      [
        region({}, [node({ HostName: 'derp 1' })]),
        'invalid_request',
        /HostName "derp 1" is neither a DNS name nor an IP address/,
      ],
      [region({}, [node({ IPv4: 'not-an-ip' })]), 'invalid_request', /IPv4 "not-an-ip" is not an IPv4 address/],
      [region({}, [node({ IPv6: '192.0.2.1' })]), 'invalid_request', /IPv6 "192\.0\.2\.1" is not an IPv6 address/],
      [region({}, [node({ STUNTestIP: 'localhost' })]), 'invalid_request', /STUNTestIP/],
      [region({}, [node(), node({ HostName: 'derp2.example.com' })]), 'invalid_request', /node "1a" appears twice/],
    ];
    for (const [r, code, detail] of cases) await refused({ derp: { regions: [r] } }, code, detail);
    // Node names are unique across every region, as tailcfg.DERPNode says.
    await refused(
      { derp: { regions: [region(), region({ RegionID: 2, RegionCode: 'r2' }, [node({ RegionID: 2 })])] } },
      'invalid_request',
      /node "1a" appears twice/,
    );
    expect(await network()).toEqual(before);
  });

  it('takes every tailcfg field of the right type, and a host name in capitals or as an address', async () => {
    const full = region({ RegionName: 'One', Latitude: 52.5, Longitude: 13.4, Avoid: false, NoMeasureNoHome: true }, [
      node({
        HostName: 'DERP1.Example.com',
        CertName: 'sha256-raw:00',
        IPv4: '192.0.2.1',
        IPv6: 'none',
        STUNPort: -1,
        STUNOnly: false,
        DERPPort: 8443,
        InsecureForTests: false,
        STUNTestIP: '192.0.2.1',
        CanPort80: true,
      }),
      node({ Name: '1b', HostName: '2001:db8::1' }),
    ]);
    const res = await server.call('PATCH', '/v1/network', { body: { derp: { regions: [full] } } });
    expect(res.status).toBe(200);
    expect((await json(res)).derp.regions).toEqual([full]);
  });
});

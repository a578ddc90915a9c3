/**
 * The network's DNS and relay settings (PATCH /v1/network `dns`, `derp`): merged field by
 * field, checked before anything is written, shown by GET /v1/network, named in every device's
 * `dnsName`, and pushed to connected Tailscale clients at once as a map delta.
 */
import { describe, expect, it } from 'vitest';
import { json } from '../../harness.js';
import { protocolFixture } from './fixture.js';
import { decodeMessages, mapRequest } from './ts-client.js';

const t = protocolFixture();

/** A Tailscale client registered as `hostname`, with its /v1 id. */
async function join(hostname: string) {
  const joined = await t.joined(await t.authKey(), hostname);
  return { ...joined, id: await t.deviceId(hostname) };
}

const patch = (body: unknown) => t.server.call('PATCH', '/v1/network', { body });

const region = (id: number, host = `derp${id}.example.com`) => ({
  RegionID: id,
  RegionCode: `r${id}`,
  RegionName: `Region ${id}`,
  Nodes: [{ Name: `${id}a`, RegionID: id, HostName: host, DERPPort: 443, STUNPort: 3478 }],
});

describe('network DNS and relay settings', () => {
  it('start at the defaults: MagicDNS on under the network name, the embedded relay, nothing else', async () => {
    const network = await json(await t.server.call('GET', '/v1/network'));
    expect(network.dns).toEqual({
      domain: 'test.warren.internal',
      magicDns: true,
      nameservers: [],
      searchDomains: [],
      splitDns: {},
      extraRecords: [],
    });
    expect(network.derp).toEqual({ embedded: true, regions: [] });
  });

  it('merge field by field, and a domain of null goes back to the default', async () => {
    let res = await patch({ dns: { domain: 'corp.example', nameservers: ['1.1.1.1', '2606:4700:4700::1111'] } });
    expect(res.status).toBe(200);
    res = await patch({ dns: { searchDomains: ['example.com'] } });
    expect((await json(res)).dns).toEqual({
      domain: 'corp.example',
      magicDns: true,
      nameservers: ['1.1.1.1', '2606:4700:4700::1111'],
      searchDomains: ['example.com'],
      splitDns: {},
      extraRecords: [],
    });
    res = await patch({ derp: { regions: [region(1)] } });
    expect((await json(res)).derp).toEqual({ embedded: true, regions: [region(1)] });
    res = await patch({ derp: { embedded: false } });
    expect((await json(res)).derp).toEqual({ embedded: false, regions: [region(1)] });
    res = await patch({ dns: { domain: null } });
    expect((await json(res)).dns.domain).toBe('test.warren.internal');
  });

  it('keep split DNS and extra records, each replaced whole when given, and read rows stored before them as empty', async () => {
    const splitDns = { 'corp.example': ['10.0.0.53', 'fd00::53'], 'lab.corp.example': [] };
    const extraRecords = [
      { name: 'grafana.corp.example', type: 'A', value: '100.64.0.10' },
      { name: 'grafana.corp.example', type: 'AAAA', value: 'fd7a:115c:a1e0::a' },
    ];
    let res = await patch({ dns: { splitDns, extraRecords } });
    expect(res.status).toBe(200);
    expect((await json(res)).dns).toMatchObject({ splitDns, extraRecords, nameservers: [] });
    expect((await json(await t.server.call('GET', '/v1/network'))).dns).toMatchObject({ splitDns, extraRecords });

    res = await patch({ dns: { nameservers: ['9.9.9.9'] } });
    expect((await json(res)).dns).toMatchObject({ splitDns, extraRecords, nameservers: ['9.9.9.9'] });
    res = await patch({ dns: { splitDns: { 'other.example': ['10.1.0.53'] }, extraRecords: [] } });
    expect((await json(res)).dns).toMatchObject({ splitDns: { 'other.example': ['10.1.0.53'] }, extraRecords: [] });

    // A row written before split DNS and extra records existed has neither field in its JSON.
    await t.server.database.storage.db
      .updateTable('networks')
      .set({ dns: JSON.stringify({ magicDns: true, nameservers: ['1.1.1.1'], searchDomains: ['example.com'] }) })
      .where('id', '=', t.server.networkId)
      .execute();
    // A change that leaves `dns` alone, so the next read is of the row as it was stored.
    expect((await patch({ deviceApproval: true })).status).toBe(200);
    expect((await json(await t.server.call('GET', '/v1/network'))).dns).toEqual({
      domain: 'test.warren.internal',
      magicDns: true,
      nameservers: ['1.1.1.1'],
      searchDomains: ['example.com'],
      splitDns: {},
      extraRecords: [],
    });
  });

  it("names every device under the network's domain, in lists and detail records alike", async () => {
    const device = await join('web');
    const before = await json(await t.server.call('GET', `/v1/devices/${device.id}`));
    expect(before.dnsName).toBe('web.test.warren.internal');
    expect((await patch({ dns: { domain: 'corp.example' } })).status).toBe(200);
    const detail = await json(await t.server.call('GET', `/v1/devices/${device.id}`));
    expect(detail.dnsName).toBe('web.corp.example');
    const { devices } = await json(await t.server.call('GET', '/v1/devices?fields=all'));
    expect(devices[0].dnsName).toBe('web.corp.example');
  });

  it('reach a connected Tailscale client at once as a delta: its DNS config, names and DERP map', async () => {
    const a = await join('alpha');
    await join('beta');
    const stream = a.client.stream(mapRequest(a.nodeKey, true));
    await stream.next(1);
    const full = stream.messages[0] as Record<string, any>;
    expect(full.DNSConfig).toEqual({ Resolvers: [], Domains: ['test.warren.internal'], Proxied: true });

    expect((await patch({ dns: { domain: 'corp.example', nameservers: ['9.9.9.9'] } })).status).toBe(200);
    await stream.next(2);
    const dns = stream.messages[1] as Record<string, any>;
    expect(dns.DNSConfig).toEqual({ Resolvers: [{ Addr: '9.9.9.9' }], Domains: ['corp.example'], Proxied: true });
    expect(dns.Domain).toBe('corp.example');

    expect((await patch({ derp: { regions: [region(7)] } })).status).toBe(200);
    await stream.next(3);
    stream.close();
    const derp = stream.messages[2] as Record<string, any>;
    expect(derp.DERPMap).toEqual({ Regions: { 7: region(7) } });

    // MagicDNS off: the client keeps the search domains, and answers no names itself.
    expect((await patch({ dns: { magicDns: false, searchDomains: ['example.com'] } })).status).toBe(200);
    const after = decodeMessages((await a.client.post('/machine/map', mapRequest(a.nodeKey, false))).body)[0] as any;
    expect(after.DNSConfig).toEqual({ Resolvers: [{ Addr: '9.9.9.9' }], Domains: ['example.com'], Proxied: false });
  });

  it('reach a connected Tailscale client as Routes and ExtraRecords, and leave them out once emptied', async () => {
    const a = await join('alpha');
    const stream = a.client.stream(mapRequest(a.nodeKey, true));
    await stream.next(1);
    expect((stream.messages[0] as any).DNSConfig).not.toHaveProperty('Routes');

    const dns = {
      splitDns: { 'corp.example': ['10.0.0.53', 'fd00::53'], 'lab.corp.example': [] },
      extraRecords: [
        { name: 'grafana.corp.example', type: 'A', value: '100.64.0.10' },
        { name: 'grafana.corp.example', type: 'AAAA', value: 'fd7a:115c:a1e0::a' },
      ],
    };
    expect((await patch({ dns })).status).toBe(200);
    await stream.next(2);
    // An empty route stays an empty list: the client answers names under it itself.
    expect((stream.messages[1] as any).DNSConfig).toEqual({
      Resolvers: [],
      Domains: ['test.warren.internal'],
      Proxied: true,
      Routes: { 'corp.example': [{ Addr: '10.0.0.53' }, { Addr: 'fd00::53' }], 'lab.corp.example': [] },
      ExtraRecords: [
        { Name: 'grafana.corp.example', Type: 'A', Value: '100.64.0.10' },
        { Name: 'grafana.corp.example', Type: 'AAAA', Value: 'fd7a:115c:a1e0::a' },
      ],
    });

    expect((await patch({ dns: { splitDns: {}, extraRecords: [] } })).status).toBe(200);
    await stream.next(3);
    stream.close();
    expect((stream.messages[2] as any).DNSConfig).toEqual({
      Resolvers: [],
      Domains: ['test.warren.internal'],
      Proxied: true,
    });
  });

  it('refuse a split DNS domain that is the MagicDNS domain or under it, on the merged settings, and change nothing', async () => {
    const refused = async (body: unknown, field: string) => {
      const before = await json(await t.server.call('GET', '/v1/network'));
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const problem = await json(res);
      expect(problem.code).toBe('invalid_request');
      expect(problem.detail.startsWith(`${field}`), problem.detail).toBe(true);
      expect(await json(await t.server.call('GET', '/v1/network'))).toEqual(before);
    };
    // The default domain, test.warren.internal, and names under it.
    await refused(
      { dns: { splitDns: { 'test.warren.internal': ['10.0.0.53'] } } },
      'dns.splitDns.test.warren.internal',
    );
    await refused({ dns: { splitDns: { 'lab.test.warren.internal': [] } } }, 'dns.splitDns.lab.test.warren.internal');
    await refused(
      { dns: { domain: 'corp.example', splitDns: { 'a.corp.example': ['10.0.0.53'] } } },
      'dns.splitDns.a.corp.example',
    );
    // A parent of the MagicDNS domain or a mere look-alike is no conflict: the longest domain wins.
    const allowed = { 'warren.internal': ['10.0.0.53'], 'xtest.warren.internal': ['10.0.0.54'], 'corp.example': [] };
    expect((await patch({ dns: { splitDns: allowed } })).status).toBe(200);
    // Moving the MagicDNS domain onto a stored route is refused too, naming dns.domain.
    await refused({ dns: { domain: 'corp.example' } }, 'dns.domain');
    await refused({ dns: { domain: 'xtest.warren.internal' } }, 'dns.domain');
    expect((await patch({ dns: { domain: 'lab.corp.example' } })).status).toBe(200);
    expect((await patch({ dns: { splitDns: { 'test.warren.internal': ['10.0.0.53'] } } })).status).toBe(200);
    // null goes back to the default, test.warren.internal, which the stored route now equals.
    await refused({ dns: { domain: null } }, 'dns.domain');
    expect((await patch({ dns: { domain: null, splitDns: {} } })).status).toBe(200);
    // Records under the MagicDNS domain are what extra records are for.
    const extraRecords = [{ name: 'grafana.test.warren.internal', type: 'A', value: '100.64.0.10' }];
    const res = await patch({ dns: { extraRecords } });
    expect(res.status).toBe(200);
    expect((await json(res)).dns).toMatchObject({ domain: 'test.warren.internal', splitDns: {}, extraRecords });
  });

  it('refuse what a client could not use, with a problem, and change nothing', async () => {
    const refusals: [unknown, string][] = [
      [{ dns: { nameservers: ['dns.example.com'] } }, 'invalid_request'],
      [{ dns: { domain: 'Not A Domain' } }, 'invalid_request'],
      [{ dns: { searchDomains: ['-bad-.example'] } }, 'invalid_request'],
      [{ dns: { resolvers: [] } }, 'unknown_field'],
      [{ dns: { splitDns: { 'Corp.Example': ['10.0.0.53'] } } }, 'invalid_request'],
      [{ dns: { splitDns: { 'corp.example.': ['10.0.0.53'] } } }, 'invalid_request'],
      [{ dns: { splitDns: { 'corp.example': ['dns.corp.example'] } } }, 'invalid_request'],
      [{ dns: { splitDns: { 'corp.example': '10.0.0.53' } } }, 'invalid_request'],
      [
        { dns: { splitDns: { 'corp.example': Array.from({ length: 17 }, (_, i) => `10.0.0.${i}`) } } },
        'invalid_request',
      ],
      [
        { dns: { splitDns: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`d${i}.example`, []])) } },
        'invalid_request',
      ],
      [{ dns: { splitDns: ['corp.example'] } }, 'invalid_request'],
      [{ dns: { extraRecords: [{ name: 'a.example', type: 'A', value: 'fd00::1' }] } }, 'invalid_request'],
      [{ dns: { extraRecords: [{ name: 'a.example', type: 'AAAA', value: '10.0.0.1' }] } }, 'invalid_request'],
      [{ dns: { extraRecords: [{ name: 'a.example', type: 'A', value: 'b.example' }] } }, 'invalid_request'],
      [{ dns: { extraRecords: [{ name: 'a.example', type: 'CNAME', value: 'b.example' }] } }, 'invalid_request'],
      [{ dns: { extraRecords: [{ name: 'A Example', type: 'A', value: '10.0.0.1' }] } }, 'invalid_request'],
      [{ dns: { extraRecords: [{ name: 'a.example', type: 'A' }] } }, 'invalid_request'],
      [{ dns: { extraRecords: [{ name: 'a.example', type: 'A', value: '10.0.0.1', ttl: 60 }] } }, 'unknown_field'],
      [
        {
          dns: {
            extraRecords: [
              { name: 'a.example', type: 'A', value: '10.0.0.1' },
              { name: 'a.example', type: 'A', value: '10.0.0.1' },
            ],
          },
        },
        'invalid_request',
      ],
      [
        {
          dns: {
            extraRecords: Array.from({ length: 257 }, (_, i) => ({
              name: `h${i}.example`,
              type: 'A',
              value: '10.0.0.1',
            })),
          },
        },
        'invalid_request',
      ],
      [{ derp: { regions: [region(1), region(1)] } }, 'invalid_request'],
      [{ derp: { regions: [{ ...region(2), Nodes: [{ ...region(3).Nodes[0] }] }] } }, 'invalid_request'],
      [{ derp: { regions: [region(900)] } }, 'invalid_request'],
      [{ derp: { regions: [{ RegionID: 4, RegionCode: 'r4', Nodes: [] }] } }, 'invalid_request'],
      [{ derp: { regions: [{ RegionID: 0, RegionCode: 'r0', Nodes: region(1).Nodes }] } }, 'invalid_request'],
    ];
    const before = await json(await t.server.call('GET', '/v1/network'));
    for (const [body, code] of refusals) {
      const res = await patch({ deviceApproval: true, ...(body as object) });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await json(res)).code, JSON.stringify(body)).toBe(code);
    }
    expect(await json(await t.server.call('GET', '/v1/network'))).toEqual(before);
    // With the embedded relay left out, its region id is free for a region of the network's own.
    expect((await patch({ derp: { embedded: false, regions: [region(900)] } })).status).toBe(200);
  });
});

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
    expect(network.dns).toEqual({ domain: 'test.warren.internal', magicDns: true, nameservers: [], searchDomains: [] });
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
    });
    res = await patch({ derp: { regions: [region(1)] } });
    expect((await json(res)).derp).toEqual({ embedded: true, regions: [region(1)] });
    res = await patch({ derp: { embedded: false } });
    expect((await json(res)).derp).toEqual({ embedded: false, regions: [region(1)] });
    res = await patch({ dns: { domain: null } });
    expect((await json(res)).dns.domain).toBe('test.warren.internal');
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

  it('refuse what a client could not use, with a problem, and change nothing', async () => {
    const refusals: [unknown, string][] = [
      [{ dns: { nameservers: ['dns.example.com'] } }, 'invalid_request'],
      [{ dns: { domain: 'Not A Domain' } }, 'invalid_request'],
      [{ dns: { searchDomains: ['-bad-.example'] } }, 'invalid_request'],
      [{ dns: { resolvers: [] } }, 'unknown_field'],
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

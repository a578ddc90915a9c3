/**
 * A network's default DNS domain is `<network name>.warren.internal`, lower case and DNS-safe
 * whatever the network is called (a network name is free text): every device's `dnsName` is
 * under it, and Tailscale clients are given it as their MagicDNS domain.
 */
import { DNS_NAME_PATTERN } from '@warren/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNetwork } from '../../src/modules/tenants/tenants.service.js';
import { enroll } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';

const DNS_NAME = new RegExp(DNS_NAME_PATTERN);

describe('the default DNS domain of oddly named networks', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('is a lower-case DNS name, each label within 63 characters and without a dash at either end', async () => {
    const names: [string, string][] = [
      ['ACME Corp!', 'acme-corp.warren.internal'],
      ['  Ünïcode  ', 'n-code.warren.internal'],
      ['---', 'network.warren.internal'],
      ['a_b.c', 'a-b-c.warren.internal'],
      // Cut at 63 characters right after a space: no trailing dash is left.
      [`${'a'.repeat(62)} b`, `${'a'.repeat(62)}.warren.internal`],
      [`${'x'.repeat(61)}--yz`, `${'x'.repeat(61)}.warren.internal`],
    ];
    for (const [name, domain] of names) {
      const { apiKey } = await createNetwork(server.database.storage.db, {
        name,
        ownerEmail: 'owner@example.com',
        plan: 'premium',
        now: server.clock.now(),
      });
      const network = await json(await server.call('GET', '/v1/network', { key: apiKey }));
      expect(network.dns.domain, name).toBe(domain);
      expect(network.dns.domain, name).toMatch(DNS_NAME);
      const authKey = (await json(await server.call('POST', '/v1/keys', { key: apiKey, body: {} }))).key;
      const { device } = await enroll(server, authKey, { hostname: 'web' });
      expect(device.dnsName, name).toBe(`web.${domain}`);
    }
  });
});

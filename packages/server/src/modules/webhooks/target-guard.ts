/**
 * Where a webhook may point. Targets must be https, and every address their host resolves
 * to must be public: loopback, private, link-local (with the cloud metadata address
 * 169.254.169.254), CGNAT (100.64.0.0/10, the mesh's own range), multicast and reserved
 * ranges, their IPv6 equivalents and IPv4-mapped IPv6 forms are refused. The check runs at
 * delivery time, in the lookup of the connection itself, so the address checked is the
 * address connected to (a name cannot resolve to a public address for the check and a
 * private one for the request). An operator may allow private targets and plain http for
 * development and tests (`--webhooks-allow-private`).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { invalidRequest } from '../../core/errors.js';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

const MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** True for an address a webhook may not reach unless private targets are allowed. */
export function isForbiddenAddress(address: string): boolean {
  const mapped = MAPPED.exec(address);
  if (mapped) return isForbiddenAddress(mapped[1]!);
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) return blocked.check(address, 'ipv6');
  return true;
}

/** Checks a target URL when a webhook is created or changed; returns it normalised. */
export function checkTargetUrl(text: string, allowPrivate: boolean): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidRequest(`"${text}" is not a URL`);
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    throw invalidRequest(
      allowPrivate
        ? 'a webhook URL must be http or https'
        : 'a webhook URL must be https (this server does not allow plain http)',
    );
  }
  if (url.username || url.password) throw invalidRequest('a webhook URL may not carry credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && (host === 'localhost' || (isIP(host) && isForbiddenAddress(host)))) {
    throw invalidRequest(`a webhook may not point at ${host}: loopback, private and link-local addresses are refused`);
  }
  return url.toString();
}

/** An error the dispatcher records as the delivery's lastError. */
export class ForbiddenTarget extends Error {}

/** A lookup for http.request that refuses a host resolving to any forbidden address. */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refused = allowPrivate ? undefined : addresses.find((a) => isForbiddenAddress(a.address));
      if (refused) {
        return callback(
          new ForbiddenTarget(`${hostname} resolves to ${refused.address}, which webhooks may not reach`),
          '',
          0,
        );
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

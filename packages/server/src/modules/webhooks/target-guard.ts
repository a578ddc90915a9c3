/**
 * Where a webhook may point. Targets must be https, and every address their host resolves
 * to must be globally reachable (forbidden-addresses.ts: IANA's special-purpose ranges, and
 * IPv6 forms that carry an IPv4 address judged by that address). The check runs at
 * delivery time, in the lookup of the connection itself, so the address checked is the
 * address connected to (a name cannot resolve to a public address for the check and a
 * private one for the request). An operator may allow private targets and plain http for
 * development and tests (`--webhooks-allow-private`).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { invalidRequest } from '../../core/errors.js';
import { isForbiddenAddress } from './forbidden-addresses.js';

/** Checks a target URL when a webhook is created or changed; returns it normalised. */
export function checkTargetUrl(text: string, allowPrivate: boolean): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidRequest(`"${text}" is not a URL`);
  }
  const refused = targetRefusal(url, allowPrivate);
  if (refused) throw invalidRequest(refused);
  return url.toString();
}

/**
 * Why the server may not deliver to `url`, or undefined when it may. Run when the URL is given
 * and again before each attempt: a URL stored while the operator allowed private targets stays
 * stored when they no longer are, and a host that is an address is connected to without any
 * lookup, so guardedLookup never sees it.
 */
export function targetRefusal(url: URL, allowPrivate: boolean): string | undefined {
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return allowPrivate
      ? 'a webhook URL must be http or https'
      : 'a webhook URL must be https (this server does not allow plain http)';
  }
  if (url.username || url.password) return 'a webhook URL may not carry credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && (host === 'localhost' || (isIP(host) && isForbiddenAddress(host)))) {
    return `a webhook may not point at ${host}: loopback, private and link-local addresses are refused`;
  }
  return undefined;
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

/**
 * Single sign-on settings: one OpenID provider per network. The issuer must be an https URL
 * (plain http only when the operator allows it, for development); domains are lowercase DNS
 * names. Changing the settings is a change like any other: audited in its own transaction.
 */
import type { SetSsoRequest, SsoConfigBody } from '@warren/contract';
import type { Actor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { invalidRequest, notFound } from '../../core/errors.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import { iso } from '../../lib/time.js';
import type { ReadStamp } from '../../storage/compiled-query.js';
import { endLinkSessions } from '../sessions/sessions.store.js';
import { sealClientSecret } from './client-secret.js';
import { findSso, type SsoSettings, saveSso } from './sso.repository.js';

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export function presentSso(sso: SsoSettings, redirectUri: string): SsoConfigBody {
  return {
    issuer: sso.issuer,
    clientId: sso.clientId,
    allowedDomains: sso.allowedDomains,
    enforce: sso.enforce,
    redirectUri,
    updated: iso(sso.updatedAt),
  };
}

function checkIssuer(text: string, allowHttp: boolean): string {
  // The issuer is compared character for character with the one the provider announces and
  // signs into every ID token (OIDC Discovery 4.3): a pasted space would fail every sign-in.
  if (text !== text.trim()) throw invalidRequest(`issuer "${text}" must not start or end with spaces`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidRequest(`issuer "${text}" is not a URL`);
  }
  const schemeOk = url.protocol === 'https:' || (allowHttp && url.protocol === 'http:');
  if (!schemeOk) throw invalidRequest(`issuer "${text}" must be an https URL`);
  if (url.search || url.hash || url.username || url.password) {
    throw invalidRequest(`issuer "${text}" must not carry a query, fragment or credentials`);
  }
  return text;
}

/** A client id or secret of spaces only would be sent to the provider at every sign-in, and refused. */
function checkCredential(field: 'clientId' | 'clientSecret', value: string): string {
  if (value.trim() === '') throw invalidRequest(`${field} must not be blank`);
  return value;
}

function checkDomains(domains: readonly string[]): string[] {
  const out = new Set<string>();
  for (const domain of domains) {
    const lower = domain.trim().toLowerCase();
    if (!DOMAIN.test(lower)) throw invalidRequest(`"${domain}" is not a domain name (e.g. example.com)`);
    out.add(lower);
  }
  return [...out].sort();
}

export async function getSso(ctx: AppContext, networkId: string, stamp?: ReadStamp): Promise<SsoSettings> {
  const sso = await findSso(ctx.db, networkId, stamp);
  if (!sso) throw notFound('single sign-on is not set up for this network; PUT /v1/network/sso sets it');
  return sso;
}

export async function setSso(ctx: AppContext, actor: Actor, body: SetSsoRequest): Promise<SsoSettings> {
  const { networkId } = actor;
  const issuer = checkIssuer(body.issuer, ctx.settings.ssoAllowHttp === true);
  const allowedDomains = checkDomains(body.allowedDomains ?? []);
  const clientId = checkCredential('clientId', body.clientId);
  const clientSecret = checkCredential('clientSecret', body.clientSecret);
  return unitOfWork(ctx, actor, 'sso.update', async (trx, now) => {
    const sso: SsoSettings = {
      networkId,
      issuer,
      clientId,
      sealedClientSecret: await sealClientSecret(trx, networkId, clientSecret),
      allowedDomains,
      enforce: body.enforce ?? false,
      updatedAt: now,
    };
    await saveSso(trx, sso);
    if (sso.enforce) await endLinkSessions(trx, networkId);
    return { value: sso, target: 'sso' };
  });
}

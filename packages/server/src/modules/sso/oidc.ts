/**
 * The relying party, on openid-client: discovery, the authorization-code flow with PKCE, and
 * every check of the ID token (issuer, audience, signature against the issuer's JWKS, expiry,
 * nonce). Nothing here parses or verifies a token by hand. The provider's metadata is fetched
 * for each sign-in, never cached, so every instance sees a key rotation at once.
 */
import * as client from 'openid-client';
import type { AppContext } from '../../core/context.js';
import { ApiError, unauthenticated } from '../../core/errors.js';
import { openClientSecret } from './client-secret.js';
import type { SsoSettings } from './sso.repository.js';

const DISCOVERY_TIMEOUT_SECONDS = 10;

export interface PendingSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
}

async function configurationOf(ctx: AppContext, sso: SsoSettings): Promise<client.Configuration> {
  const allowHttp = ctx.settings.ssoAllowHttp === true;
  const clientSecret = await openClientSecret(ctx.db, sso.networkId, sso.sealedClientSecret);
  let config: client.Configuration;
  try {
    config = await client.discovery(
      new URL(sso.issuer),
      sso.clientId,
      // Our clock is the one that decides expiry (tests move it; production's is the system's).
      { [client.clockSkew]: Math.round((ctx.clock.now() - Date.now()) / 1000) },
      client.ClientSecretBasic(clientSecret),
      { timeout: DISCOVERY_TIMEOUT_SECONDS, ...(allowHttp ? { execute: [client.allowInsecureRequests] } : {}) },
    );
  } catch (error) {
    throw new ApiError(
      'unavailable',
      `the identity provider ${sso.issuer} could not be reached or is not an OpenID provider: ${(error as Error).message}`,
    );
  }
  // By default an ID token fetched from the token endpoint is trusted on the strength of TLS
  // alone (OIDC Core 3.1.3.7 allows it); we check its signature against the issuer's JWKS too.
  client.enableNonRepudiationChecks(config);
  return config;
}

/** openid-client's reason, with the underlying check's own words (which claim failed, and how). */
function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: unknown })?.cause;
  return cause instanceof Error && cause.message !== message ? `${message}: ${cause.message}` : message;
}

/** Where to send the browser, and the secrets to keep until it comes back. */
export async function beginSignIn(
  ctx: AppContext,
  sso: SsoSettings,
  redirectUri: string,
): Promise<{ url: string; pending: PendingSignIn }> {
  const config = await configurationOf(ctx, sso);
  const pending = {
    state: client.randomState(),
    nonce: client.randomNonce(),
    codeVerifier: client.randomPKCECodeVerifier(),
  };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    response_type: 'code',
    code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  });
  return { url: url.href, pending };
}

export interface VerifiedIdentity {
  email: string;
  name: string | undefined;
}

/** Redeems the code and returns the verified email of the ID token; anything amiss is a 401. */
export async function finishSignIn(
  ctx: AppContext,
  sso: SsoSettings,
  callbackUrl: URL,
  pending: PendingSignIn,
): Promise<VerifiedIdentity> {
  const config = await configurationOf(ctx, sso);
  let claims: client.IDToken | undefined;
  try {
    const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    claims = tokens.claims();
  } catch (error) {
    throw unauthenticated(`single sign-on failed: ${reason(error)}`);
  }
  if (!claims) throw unauthenticated('single sign-on failed: the provider returned no ID token');
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  if (!email) throw unauthenticated('single sign-on failed: the ID token carries no email (request the email scope)');
  // Only an address the provider vouches for names a person: an unverified one could be anyone's.
  if (claims.email_verified !== true) {
    throw unauthenticated(`single sign-on refused: the provider has not verified the email ${email}`);
  }
  return { email, name: typeof claims.name === 'string' ? claims.name : undefined };
}

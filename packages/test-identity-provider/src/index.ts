/**
 * A real OpenID provider for the tests: oidc-provider on a loopback port, with one client
 * (Warren) and accounts whose email is verified or not. Its login screen signs in whichever
 * account the test chose (`signInAs`), and consent is granted up front, so a test walks the
 * whole authorization-code flow over HTTP without a person at the keyboard.
 */
import { generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface Account {
  email: string;
  emailVerified: boolean;
  name?: string;
}

export interface IdentityProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The account the next sign-in at the provider is for. */
  signInAs(account: Account): void;
  /** Publish other keys than those that sign (a provider whose tokens no longer verify). */
  publishForeignKeys(on: boolean): void;
  close(): Promise<void>;
}

function signingKey(kid: string): JsonWebKey {
  const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  return { ...jwk, kid, use: 'sig', alg: 'RS256' };
}

export async function startIdentityProvider(options: {
  redirectUri: string;
  idTokenTtlSeconds?: number;
}): Promise<IdentityProvider> {
  let account: Account = { email: 'owner@example.com', emailVerified: true };
  let foreignKeys = false;
  const accounts = new Map<string, Account>();
  const foreign = signingKey('foreign');
  const publicOf = (jwk: JsonWebKey) => ({ kty: jwk.kty, n: jwk.n, e: jwk.e, kid: jwk.kid, use: 'sig', alg: 'RS256' });

  let handler: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void;
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'warren-console';
  const clientSecret = 'a-long-client-secret-for-the-tests-0123456789';

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
      },
    ],
    jwks: { keys: [signingKey('signer')] },
    cookies: { keys: ['test-cookie-key-0123456789'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // Claims in the ID token itself, as Keycloak and Google put them.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    ttl: { IdToken: options.idTokenTtlSeconds ?? 3600 },
    findAccount: async (_ctx: unknown, sub: string) => {
      const found = accounts.get(sub);
      if (!found) return undefined;
      return {
        accountId: sub,
        claims: async () => ({ sub, email: found.email, email_verified: found.emailVerified, name: found.name }),
      };
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    // Consent is granted beforehand, as an administrator does for a company's own apps.
    loadExistingGrant: async (ctx: {
      oidc: { provider: typeof provider; client: { clientId: string }; session: { accountId?: string } };
    }) => {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  const callback = provider.callback();
  handler = (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      void (async () => {
        const sub = `acct-${account.email}`;
        accounts.set(sub, account);
        await provider.interactionFinished(req, res, { login: { accountId: sub } }, { mergeWithLastSubmission: false });
      })().catch((error: Error) => {
        res.statusCode = 500;
        res.end(error.message);
      });
      return;
    }
    if (foreignKeys && req.url?.startsWith('/jwks')) {
      res.setHeader('content-type', 'application/jwk-set+json');
      res.end(JSON.stringify({ keys: [publicOf(foreign)] }));
      return;
    }
    callback(req, res);
  };

  return {
    issuer,
    clientId,
    clientSecret,
    signInAs: (next) => {
      account = next;
    },
    publishForeignKeys: (on) => {
      foreignKeys = on;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * `POST /api/v2/oauth/token`: OAuth 2.0's client-credentials grant (RFC 6749 §4.4), as
 * Tailscale's clients use it. The client id and secret come in Basic (each form-encoded, as
 * RFC 6749 §2.3.1 has it) or in the form, or the secret alone written as Tailscale writes its
 * own, the id inside (tailscaleWritten); `scope` (space-separated) may narrow the token.
 * The answer is `{ access_token, token_type, expires_in, scope }`; refusals carry OAuth's
 * `error` and `error_description` beside Tailscale's `message` and `status`.
 *
 * No credential precedes the call, so a refused one counts against the caller's address, as
 * any call without a valid key does; a granted one against the client's own rate limit.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../../core/errors.js';
import { actorOf } from '../../edge/actor.js';
import { clientAddress } from '../../edge/client-address.js';
import { rateLimited, setRateLimitHeaders } from '../../edge/rate-limit-reply.js';
import { toApiError } from '../../edge/to-api-error.js';
import { parseList } from '../../lib/json.js';
import { issueToken, verifyClient } from '../../modules/oauth/oauth.service.js';
import { warrenScopesOf } from '../../modules/oauth/scopes.js';
import { invalidRequest, unauthenticated } from '../problem.js';

const FORM = 'application/x-www-form-urlencoded';

/** RFC 6749 §5.2's error for each of Warren's codes this endpoint can meet. */
const OAUTH_ERROR: Record<string, string> = {
  unauthenticated: 'invalid_client',
  key_revoked: 'invalid_client',
  insufficient_scope: 'invalid_scope',
  rate_limited: 'slow_down',
};

type TokenForm = { grant_type?: unknown; client_id?: unknown; client_secret?: unknown; scope?: unknown };

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The id and secret of `Authorization: Basic`, each form-decoded; undefined when absent or malformed. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    const formDecode = (part: string) => decodeURIComponent(part.replaceAll('+', ' '));
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

function credentialsOf(request: FastifyRequest, form: TokenForm): { id: string; secret: string } {
  const basic = basicCredentials(request.headers.authorization);
  if (request.headers.authorization !== undefined && !basic) {
    throw unauthenticated('send the client id and secret as Basic credentials, or as client_id and client_secret');
  }
  const inForm = text(form.client_id) !== undefined || text(form.client_secret) !== undefined;
  if (basic && inForm) throw invalidRequest('send the client credentials once: in Basic or in the form, not both');
  const secret = basic?.secret ?? text(form.client_secret);
  const id = basic?.id ?? text(form.client_id);
  const embedded = secret === undefined ? undefined : tailscaleWritten(secret);
  if (embedded) return embedded;
  if (!id || !secret) throw unauthenticated('the call needs an OAuth client id and secret');
  return { id, secret };
}

const TAILSCALE_SECRET = 'tskey-client-';

/**
 * A secret written as Tailscale writes its own, `tskey-client-<client id>-<secret>`, names its
 * client, and the id sent beside it is not read, as Tailscale does not read it: `tailscale up
 * --auth-key='tskey-client-…?baseURL=…'` sends the secret so with the placeholder id
 * "some-client-id" (the client's feature/oauthkey). Neither a Warren id nor a Warren secret
 * holds a "-", so the first one after the prefix divides them.
 */
function tailscaleWritten(secret: string): { id: string; secret: string } | undefined {
  if (!secret.startsWith(TAILSCALE_SECRET)) return undefined;
  const rest = secret.slice(TAILSCALE_SECRET.length);
  const dash = rest.indexOf('-');
  if (dash <= 0) throw unauthenticated('a secret written as Tailscale writes it is tskey-client-<client id>-<secret>');
  return { id: rest.slice(0, dash), secret: rest.slice(dash + 1) };
}

function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError) {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  if (error.status === 401) reply.header('WWW-Authenticate', 'Basic realm="warren"');
  return reply
    .code(error.status)
    .type('application/json; charset=utf-8')
    .send({
      error: OAUTH_ERROR[error.code] ?? 'invalid_request',
      error_description: error.detail,
      message: error.detail,
      status: error.status,
      code: error.code,
      requestId: request.id,
    });
}

export async function tailscaleOAuthRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: 8192 }, (_request, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );

  app.post('/oauth/token', { config: { auth: 'none' }, schema: { hide: true } }, async (request, reply) => {
    const form = (request.body && typeof request.body === 'object' ? request.body : {}) as TokenForm;
    let client: Awaited<ReturnType<typeof verifyClient>>;
    try {
      const { id, secret } = credentialsOf(request, form);
      client = await verifyClient(ctx, id, secret);
    } catch (error) {
      const decision = await ctx.limiter.hit(`addr:${clientAddress(request)}`, ctx.settings.anonymousRateLimit);
      setRateLimitHeaders(reply, decision);
      if (!decision.allowed)
        return sendError(request, reply, rateLimited(decision, `client ${clientAddress(request)}`));
      throw error;
    }
    const decision = await ctx.limiter.hit(`key:${client.id}`, client.rate_limit ?? ctx.settings.apiRateLimit);
    setRateLimitHeaders(reply, decision);
    const name = client.description || client.id;
    if (!decision.allowed) return sendError(request, reply, rateLimited(decision, `OAuth client "${name}"`));

    const grantType = text(form.grant_type);
    if (grantType !== 'client_credentials') {
      return reply.code(400).send({
        error: 'unsupported_grant_type',
        error_description: `grant_type must be "client_credentials" (got ${grantType === undefined ? 'none' : `"${grantType}"`})`,
        message: 'grant_type must be "client_credentials"',
        status: 400,
        code: 'invalid_request',
        requestId: request.id,
      });
    }
    const requested = (text(form.scope) ?? '').split(' ').filter(Boolean);
    // The token's own call is the client's: its audit entry names the client.
    const own = parseList(client.scopes);
    const clientExpiresAt = client.expires_at == null ? Number.MAX_SAFE_INTEGER : Number(client.expires_at);
    request.networkId = client.network_id;
    request.principal = {
      networkId: client.network_id,
      keyId: client.id,
      keyName: name,
      scopes: warrenScopesOf(own),
      expiresAt: clientExpiresAt,
      oauth: { scopes: own, tags: parseList(client.tags), clientExpiresAt },
    };
    const issued = await issueToken(ctx, actorOf(request), client, requested);
    reply.header('Cache-Control', 'no-store');
    return {
      access_token: issued.token,
      token_type: 'Bearer',
      expires_in: issued.expiresIn,
      scope: issued.scopes.join(' '),
    };
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.code === 'internal') request.log.error({ err: error }, 'unhandled error');
    return sendError(request, reply, apiError);
  });
}

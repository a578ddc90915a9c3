/**
 * Access tokens as authentication reads them: the token of a secret, looked up by its
 * SHA-256 (compared again in constant time by the caller) with its client, on every call.
 */
import { compiledQuery } from '../../storage/compiled-query.js';

/** Run on every call an OAuth token makes, so built once (storage/compiled-query.ts). */
export const accessTokenByHash = compiledQuery((db, p: { hash: string }) =>
  db
    .selectFrom('oauth_tokens')
    .innerJoin('oauth_clients', 'oauth_clients.id', 'oauth_tokens.client_id')
    .select([
      'oauth_tokens.token_hash',
      'oauth_tokens.scopes',
      'oauth_tokens.expires_at',
      'oauth_clients.id as client_id',
      'oauth_clients.network_id',
      'oauth_clients.description',
      'oauth_clients.tags',
      'oauth_clients.rate_limit',
      'oauth_clients.revoked_at',
      'oauth_clients.expires_at as client_expires_at',
    ])
    .where('oauth_tokens.token_hash', '=', p.hash),
);

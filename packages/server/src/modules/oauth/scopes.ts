/**
 * Tailscale's OAuth scopes and how they meet Warren's. A scope `x` allows writing and reading
 * what it names, `x:read` reading only; `all` allows everything, `all:read` reading anything.
 *
 * On /api/v2 a token is checked against the Tailscale scope each route declares. Everywhere
 * else (/v1) it acts with the Warren scopes its Tailscale scopes add up to: `all` → `all`,
 * `all:read` → `read`, `devices:core` with `devices:routes` → `devices` (Warren's one scope
 * covers both), `policy_file` → `acls`, `auth_keys` → `keys`, `users` → `users`. A `…:read`
 * scope of one resource has no Warren equivalent (Warren's `read` reads everything), so it
 * grants nothing on /v1; neither do `oauth_keys` and `feature_settings`.
 */
import { type Scope, TAILSCALE_RESOURCES, type TailscaleResource } from '@warren/contract';

export const TAILSCALE_SCOPES: readonly string[] = [
  'all',
  'all:read',
  ...TAILSCALE_RESOURCES.flatMap((r) => [r, `${r}:read`]),
];

export const isTailscaleScope = (scope: string): boolean => TAILSCALE_SCOPES.includes(scope);

/** Whether `held` allows `needed` (a scope name, `x` or `x:read`). */
export function allowsScope(held: readonly string[], needed: string): boolean {
  if (held.includes('all') || held.includes(needed)) return true;
  if (!needed.endsWith(':read')) return false;
  return held.includes('all:read') || held.includes(needed.slice(0, -':read'.length));
}

/** Whether `held` allows the call: a read of `resource` for a GET, else a write. */
export function allowsCall(held: readonly string[], method: string, resource: TailscaleResource): boolean {
  const read = method === 'GET' || method === 'HEAD';
  return allowsScope(held, read ? `${resource}:read` : resource);
}

/** The Warren scopes a token with these Tailscale scopes acts with outside /api/v2. */
export function warrenScopesOf(scopes: readonly string[]): Scope[] {
  if (scopes.includes('all')) return ['all'];
  const out: Scope[] = [];
  if (scopes.includes('all:read')) out.push('read');
  if (scopes.includes('devices:core') && scopes.includes('devices:routes')) out.push('devices');
  if (scopes.includes('policy_file')) out.push('acls');
  if (scopes.includes('auth_keys')) out.push('keys');
  if (scopes.includes('users')) out.push('users');
  return out;
}

/** The Warren scope that covers writing each resource; settings are Warren's `all`. */
const WARREN_SCOPE: Record<TailscaleResource, Scope> = {
  'devices:core': 'devices',
  'devices:routes': 'devices',
  policy_file: 'acls',
  auth_keys: 'keys',
  // Managing OAuth clients is key management.
  oauth_keys: 'keys',
  users: 'users',
  feature_settings: 'all',
};

/**
 * The Warren scopes, any one of which lets an API key grant `scope` to an OAuth client it
 * creates (a key grants nothing it cannot do itself).
 */
export function warrenScopesFor(scope: string): Scope[] {
  if (scope === 'all') return ['all'];
  if (scope === 'all:read') return ['read'];
  const read = scope.endsWith(':read');
  const own = WARREN_SCOPE[(read ? scope.slice(0, -':read'.length) : scope) as TailscaleResource];
  return read ? [own, 'read'] : [own];
}

/**
 * `{tailnet}` in Tailscale's paths: `-` (the caller's own) or the caller's network id. Any
 * other value is 404, as an id of another network is everywhere else. Beside it, the readings
 * of a request every route shares.
 */
import type { FastifyRequest } from 'fastify';
import { invalidRequest, notFound } from '../problem.js';

export function tailnetOf(request: FastifyRequest<{ Params: { tailnet: string } }>): string {
  const networkId = request.principal!.networkId;
  const { tailnet } = request.params;
  if (tailnet !== '-' && tailnet !== networkId) throw notFound(`tailnet ${tailnet} does not exist`);
  return networkId;
}

/** Go clients send a nil list as `null`: the same as an empty one. */
export const listOrEmpty = <T>(list: readonly T[] | null | undefined): T[] => (list ? [...list] : []);

/**
 * A yes-or-no query parameter (`all=true`, `details=1`): `true` or `1`; absent, empty, `false`
 * or `0` is no. Anything else is refused: read as no, it would quietly answer less than asked.
 */
export function queryFlag(name: string, value: string | string[] | undefined): boolean {
  if (value === undefined || value === '' || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  throw invalidRequest(`${name} must be true or false (got ${JSON.stringify(value)})`);
}

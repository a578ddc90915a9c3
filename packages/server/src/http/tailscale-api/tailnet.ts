/**
 * `{tailnet}` in Tailscale's paths: `-` (the caller's own) or the caller's network id. Any
 * other value is 404, as an id of another network is everywhere else.
 */
import type { FastifyRequest } from 'fastify';
import { notFound } from '../problem.js';

export function tailnetOf(request: FastifyRequest<{ Params: { tailnet: string } }>): string {
  const networkId = request.principal!.networkId;
  const { tailnet } = request.params;
  if (tailnet !== '-' && tailnet !== networkId) throw notFound(`tailnet ${tailnet} does not exist`);
  return networkId;
}

/** Go clients send a nil list as `null`: the same as an empty one. */
export const listOrEmpty = <T>(list: readonly T[] | null | undefined): T[] => (list ? [...list] : []);

/**
 * The plain HTTP side of the relay: `/derp` without an upgrade (426), the latency probes that
 * clients without UDP use instead of STUN, and `/generate_204`, Tailscale's captive-portal check
 * (it echoes a challenge so a portal that answers every request cannot pass for the relay).
 * None needs a credential and none is audited: clients call them every few seconds.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../core/errors.js';

const CHALLENGE = /^[A-Za-z0-9._:-]{1,64}$/;

export async function derpRoutes(app: FastifyInstance): Promise<void> {
  const config = { auth: 'none', audit: false } as const;
  const schema = { hide: true };
  app.get('/derp', { config, schema }, async () => {
    throw new ApiError(
      'upgrade_required',
      'the relay speaks DERP: send GET /derp with "Upgrade: DERP" and "Connection: Upgrade"',
      {},
      { Upgrade: 'DERP', Connection: 'Upgrade' },
    );
  });
  const probe = async (_request: unknown, reply: FastifyReply) => {
    reply.header('Access-Control-Allow-Origin', '*');
    return reply.code(200).send();
  };
  for (const url of ['/derp/probe', '/derp/latency-check']) {
    app.route({ method: ['GET', 'HEAD'], url, config, schema, handler: probe });
  }
  app.get('/generate_204', { config, schema }, async (request, reply) => {
    const challenge = request.headers['x-tailscale-challenge'];
    if (typeof challenge === 'string' && CHALLENGE.test(challenge)) {
      reply.header('X-Tailscale-Response', `response ${challenge}`);
    }
    reply.header('Cache-Control', 'no-cache, no-store, must-revalidate, no-transform, max-age=0');
    return reply.code(204).send();
  });
}

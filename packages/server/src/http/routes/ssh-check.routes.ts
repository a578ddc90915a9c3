/**
 * The console's side of a Tailscale SSH check (a connection under an `ssh` rule with `action:
 * "check"` prints `{public URL}/ssh-check/{token}`, a console page): `GET /auth/ssh-check/{token}`
 * shows the session to the signed-in person, `POST /auth/ssh-check/{token}/approve` confirms it
 * when they own the source device. Only a console session may call them — confirming is a
 * person's act, not an API key's — so they stay out of /v1 and of the OpenAPI document, like
 * the machine login's.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../edge/actor.js';
import { approveSshCheck, describeSshCheck } from '../../modules/devices/login/ssh-check.service.js';
import { limitByAddress } from '../address-limit.js';
import { authenticateSession } from '../session-auth.js';

const TokenParams = Type.Object({ token: Type.String({ minLength: 16, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }) });
const ApproveBody = Type.Object({}, { additionalProperties: false });

export async function sshCheckRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  const session = { config: { auth: 'none' as const }, onRequest: [limitByAddress, authenticateSession] };

  app.get<{ Params: { token: string } }>(
    '/auth/ssh-check/:token',
    { ...session, schema: { hide: true, params: TokenParams } },
    async (request) => describeSshCheck(ctx, actorOf(request), request.params.token),
  );

  app.post<{ Params: { token: string } }>(
    '/auth/ssh-check/:token/approve',
    { ...session, schema: { hide: true, params: TokenParams, body: ApproveBody } },
    async (request) => approveSshCheck(ctx, actorOf(request), request.params.token),
  );
}

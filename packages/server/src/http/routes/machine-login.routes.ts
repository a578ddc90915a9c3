/**
 * The console's side of a Tailscale client's interactive login (`tailscale up` without an auth
 * key prints `{public URL}/register/{token}`, a console page): `GET /auth/register/{token}`
 * shows the machine to the signed-in person, `POST /auth/register/{token}/approve` makes it
 * theirs (or, by the role table, another user's: `{ "user": id or loginName }`). Only a console
 * session may call them — approving a login is a person's act, not an API key's — so they stay
 * out of /v1 and of the OpenAPI document, like the other sign-in endpoints.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../edge/actor.js';
import { approveMachineLogin, describeMachineLogin } from '../../modules/devices/login/machine-login.service.js';
import { limitByAddress } from '../address-limit.js';
import { authenticateSession } from '../session-auth.js';

const TokenParams = Type.Object({ token: Type.String({ minLength: 16, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }) });
const ApproveBody = Type.Object(
  { user: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })) },
  { additionalProperties: false },
);

export async function machineLoginRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  // The session is the credential (and, for the approval, its CSRF token): 401 without one,
  // counted against the caller's address like any call without a credential.
  const session = { config: { auth: 'none' as const }, onRequest: [limitByAddress, authenticateSession] };

  app.get<{ Params: { token: string } }>(
    '/auth/register/:token',
    { ...session, schema: { hide: true, params: TokenParams } },
    async (request) => describeMachineLogin(ctx, actorOf(request), request.params.token),
  );

  app.post<{ Params: { token: string }; Body: { user?: string } }>(
    '/auth/register/:token/approve',
    { ...session, schema: { hide: true, params: TokenParams, body: ApproveBody } },
    async (request, reply) => {
      const done = await approveMachineLogin(ctx, actorOf(request, 201), request.params.token, request.body ?? {});
      return reply.code(201).send(done);
    },
  );
}

/**
 * Tailscale's policy file endpoints over Warren's policy service: the same validation (Warren's
 * is stricter: it refuses over-permissive rules), the same versions, audit entries and events.
 *
 * - `GET acl`: the stored HuJSON text, comments included, unless the caller asks for
 *   `application/json` (Tailscale's rule: JSON when asked for, HuJSON otherwise, so `curl`
 *   without an `Accept` gets the file as written); the quoted ETag either way. With
 *   `details=1`, `{ acl: <the file in base64>, warnings, errors }` as Tailscale answers it.
 * - `POST acl`: replaces it (HuJSON or JSON text; an empty body restores the default policy) and
 *   answers with the new policy as GET would. `If-Match` arrives re-quoted by Tailscale's
 *   client; `"ts-default"` matches only while the policy is still the default one.
 * - `POST acl/validate`: 200 with `{}` when valid, else `{ message, data }` with every problem's
 *   line and column (errors.ts, policyProblems); a JSON array is tests to run against the
 *   current policy, Tailscale's other form of the call.
 *
 * Bodies are text here, read by this plugin's own parser (the API's JSON parser would drop
 * comments and refuse trailing commas).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { actorOf } from '../../edge/actor.js';
import { acceptWeight } from '../../lib/accept.js';
import { getPolicy, replacePolicy, runPolicyTests, validatePolicyText } from '../../modules/acl/acl.service.js';
import { DEFAULT_POLICY } from '../../policy/index.js';
import { policyProblems } from './errors.js';
import { queryFlag, tailnetOf } from './tailnet.js';

const HUJSON = 'application/hujson';
const JSON_TYPE = 'application/json';
const config = { scope: 'acls' as const, tailscaleScope: 'policy_file' as const };
const hide = { hide: true };
const TS_DEFAULT = 'ts-default';
/**
 * Files sent here come from Tailscale's tools and mean what Tailscale reads in them: one with
 * neither acls nor grants (all traffic allowed there) is refused rather than read as nothing.
 */
const AS_TAILSCALE = { asTailscale: true } as const;

type TailnetRequest = FastifyRequest<{ Params: { tailnet: string } }>;

/** Whether `Accept` names `application/json` itself (a wildcard does not: Tailscale answers HuJSON). */
const acceptsJson = (request: FastifyRequest): boolean => acceptWeight(request.headers.accept, JSON_TYPE) > 0;

/** A validate body that is a JSON array: tests to run against the current policy, not a policy. */
function testsAlone(text: string): unknown[] | undefined {
  if (!text.trimStart().startsWith('[')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value : undefined;
  } catch {
    // Not JSON: validated as a policy text, whose answer locates the syntax error.
    return undefined;
  }
}

const bodyText = (request: FastifyRequest): string => (typeof request.body === 'string' ? request.body : '');
const unquote = (tag: string) => tag.trim().replace(/^"(.*)"$/, '$1');

export async function tailscalePolicyRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  const send = (
    request: TailnetRequest,
    reply: import('fastify').FastifyReply,
    policy: Awaited<ReturnType<typeof getPolicy>>,
  ) => {
    reply.header('etag', policy.etag);
    if (acceptsJson(request)) return reply.type(`${JSON_TYPE}; charset=utf-8`).send(policy.meaning);
    return reply.type(`${HUJSON}; charset=utf-8`).send(policy.text);
  };

  app.get<{ Params: { tailnet: string }; Querystring: { details?: string | string[] } }>(
    '/tailnet/:tailnet/acl',
    { config, schema: hide },
    async (request, reply) => {
      const policy = await getPolicy(ctx, tailnetOf(request), request.principal!.readStamp);
      if (!queryFlag('details', request.query.details)) return send(request, reply, policy);
      // Tailscale's details=1: the file in base64, with its warnings and errors. A stored
      // policy passed validation, which Warren does not soften into warnings: none of either.
      reply.header('etag', policy.etag);
      return reply
        .type(`${JSON_TYPE}; charset=utf-8`)
        .send({ acl: Buffer.from(policy.text).toString('base64'), warnings: [], errors: null });
    },
  );

  app.post<{ Params: { tailnet: string } }>(
    '/tailnet/:tailnet/acl',
    { config, schema: hide },
    async (request, reply) => {
      const networkId = tailnetOf(request);
      const text = bodyText(request).trim() === '' ? DEFAULT_POLICY : bodyText(request);
      const header = request.headers['if-match'];
      // Any other If-Match is /v1's: `*`, one or more ETags quoted or bare, weak ones never
      // matching (Tailscale's client quotes the ETag it read).
      let ifMatch = header;
      if (header !== undefined && unquote(header) === TS_DEFAULT) {
        // "ts-default": only while the policy is the default one; then it is conditional on that
        // version, so a change made meanwhile still wins the race (412).
        const current = await getPolicy(ctx, networkId);
        ifMatch = current.text === DEFAULT_POLICY ? current.etag : `"${TS_DEFAULT}"`;
      }
      let stored: Awaited<ReturnType<typeof replacePolicy>>;
      try {
        stored = await replacePolicy(ctx, actorOf(request), text, ifMatch, undefined, AS_TAILSCALE);
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'policy_invalid') throw error;
        // The refusal names problems only; the tests' sources, which Tailscale reports failures
        // under, come from validating the text again (on this failing path only).
        const body = policyProblems(await validatePolicyText(ctx, text, AS_TAILSCALE));
        return reply
          .code(error.status)
          .type(`${JSON_TYPE}; charset=utf-8`)
          .send({ ...body, status: error.status, code: error.code, requestId: request.id });
      }
      return send(request, reply, stored);
    },
  );

  app.post<{ Params: { tailnet: string } }>(
    '/tailnet/:tailnet/acl/validate',
    { config, schema: hide },
    async (request) => {
      const networkId = tailnetOf(request);
      const tests = testsAlone(bodyText(request));
      if (tests) {
        const result = await runPolicyTests(ctx, networkId, tests, request.principal!.readStamp);
        return result.valid ? {} : policyProblems(result, false);
      }
      const result = await validatePolicyText(ctx, bodyText(request), AS_TAILSCALE);
      return result.valid ? {} : policyProblems(result);
    },
  );
}

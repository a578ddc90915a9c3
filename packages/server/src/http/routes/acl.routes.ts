/**
 * /v1/acl: the network's policy. Read it as JSON or as the stored HuJSON text, replace it
 * (optionally conditional on its ETag), validate a draft, and read earlier versions.
 *
 * Policy bodies are text, stored verbatim: inside this plugin's encapsulated context JSON,
 * HuJSON, plain text and bodies without a content type are all read as strings (the API's
 * JSON parser would drop the comments, and reject the trailing commas HuJSON allows).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../../edge/actor.js';
import { apiSchema, ref } from '../../edge/api-schema.js';
import { acceptWeight } from '../../lib/accept.js';
import { entityTagsMatch } from '../../lib/entity-tags.js';
import {
  getPolicy,
  policyAtVersion,
  policyHistory,
  replacePolicy,
  validatePolicyText,
} from '../../modules/acl/acl.service.js';
import { ApiError } from '../problem.js';

export const HUJSON = 'application/hujson';
const HUJSON_TYPE = `${HUJSON}; charset=utf-8`;
const JSON_TYPE = 'application/json; charset=utf-8';
/**
 * The policy is taken as text whatever its JSON flavour. `application/x-www-form-urlencoded`
 * is what `curl --data-binary @policy.hujson` sends when no type is given, so it is read as
 * the policy text too rather than refused.
 */
const FORM = 'application/x-www-form-urlencoded';
const POLICY_MEDIA_TYPES = ['application/json', HUJSON, 'text/plain', FORM];

const tags = ['acl'];
const PolicyJson = Type.Object(
  {},
  { additionalProperties: true, description: 'the policy document as JSON (comments dropped)' },
);
const PolicyText = Type.String({ description: 'the policy as HuJSON text, exactly as stored' });
const etagHeader = { ETag: { type: 'string', description: "the version's ETag, quoted (for If-Match)" } };
/** The policy in either form, as GET returns it. */
const policyContent = {
  headers: etagHeader,
  content: {
    'application/json': { schema: PolicyJson },
    [HUJSON]: { schema: PolicyText },
  },
};
const policyBody = {
  content: {
    'application/json': { schema: Type.String({ description: 'the policy as JSON text' }) },
    [HUJSON]: { schema: PolicyText },
    'text/plain': { schema: PolicyText },
    [FORM]: { schema: PolicyText },
  },
};
const VersionParams = Type.Object({ version: Type.Integer({ minimum: 1 }) });
const VersionRecord = Type.Object({
  version: Type.Integer(),
  etag: Type.String(),
  created: Type.String({ format: 'date-time' }),
  createdBy: Type.Union([Type.String(), Type.Null()]),
});

const bodyText = (request: FastifyRequest): string => (typeof request.body === 'string' ? request.body : '');
/** The stored text when `Accept` names HuJSON (and prefers nothing to it but JSON equally). */
const wantsHujson = (request: FastifyRequest): boolean => {
  const hujson = acceptWeight(request.headers.accept, HUJSON);
  return hujson > 0 && hujson >= acceptWeight(request.headers.accept, 'application/json');
};

export async function aclRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(POLICY_MEDIA_TYPES, { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    if (request.headers['content-type'] === undefined) return done(null, body);
    done(
      new ApiError(
        'unsupported_media_type',
        `send the policy as ${HUJSON}, application/json or text/plain (got ${request.headers['content-type']})`,
      ),
    );
  });

  app.get(
    '/acl',
    {
      config: { scope: 'acls' },
      schema: apiSchema({
        operationId: 'getPolicy',
        tags,
        summary: 'The policy: JSON by default, the stored HuJSON text with Accept: application/hujson',
        response: {
          200: { description: 'the current policy; header ETag', ...policyContent },
          304: { description: 'If-None-Match names the current ETag: the policy is unchanged', headers: etagHeader },
        },
      }),
    },
    async (request, reply) => {
      const policy = await getPolicy(ctx, request.principal!.networkId, request.principal!.readStamp);
      reply.header('etag', policy.etag);
      const held = request.headers['if-none-match'];
      // A reader holding the current policy is answered 304 without it (RFC 9110 §13.1.2).
      if (held && entityTagsMatch(held, policy.etag, 'weak')) return reply.code(304).send();
      if (wantsHujson(request)) return reply.type(HUJSON_TYPE).send(policy.text);
      return reply.type(JSON_TYPE).send(policy.meaning);
    },
  );

  app.put<{ Headers: { 'if-match'?: string; 'if-none-match'?: string } }>(
    '/acl',
    {
      config: { scope: 'acls' },
      schema: apiSchema(
        {
          operationId: 'setPolicy',
          tags,
          summary: 'Replace the policy (HuJSON or JSON text, stored verbatim); If-Match makes it conditional',
          body: policyBody,
          response: {
            200: {
              description: 'the stored policy as JSON; header ETag',
              headers: etagHeader,
              content: { 'application/json': { schema: PolicyJson } },
            },
          },
        },
        [400, 412, 413, 415, 422],
      ),
    },
    async (request, reply) => {
      const { 'if-match': ifMatch, 'if-none-match': ifNoneMatch } = request.headers;
      const stored = await replacePolicy(ctx, actorOf(request), bodyText(request), ifMatch, ifNoneMatch);
      reply.header('etag', stored.etag);
      return reply.type(JSON_TYPE).send(stored.meaning);
    },
  );

  app.post(
    '/acl/validate',
    {
      config: { scope: 'acls' },
      schema: apiSchema(
        {
          operationId: 'validatePolicy',
          tags,
          summary: 'Validate a policy without storing it (every problem with its line and column)',
          body: policyBody,
          response: { 200: ref('ValidationResult') },
        },
        [413, 415, 422],
      ),
    },
    async (request) => validatePolicyText(ctx, bodyText(request)),
  );

  app.get(
    '/acl/history',
    {
      config: { scope: 'acls' },
      schema: apiSchema({
        operationId: 'listPolicyHistory',
        tags,
        summary: 'Every stored version of the policy, newest first',
        response: { 200: Type.Object({ versions: Type.Array(VersionRecord) }) },
      }),
    },
    async (request) => policyHistory(ctx, request.principal!.networkId, request.principal!.readStamp),
  );

  app.get<{ Params: { version: number } }>(
    '/acl/history/:version',
    {
      config: { scope: 'acls' },
      schema: apiSchema(
        {
          operationId: 'getPolicyVersion',
          tags,
          summary: 'The text of one stored version of the policy (HuJSON, as it was sent); header ETag',
          params: VersionParams,
          response: {
            200: { description: 'the stored text', headers: etagHeader, content: { [HUJSON]: { schema: PolicyText } } },
          },
        },
        [400, 404],
      ),
    },
    async (request, reply) => {
      const row = await policyAtVersion(
        ctx,
        request.principal!.networkId,
        request.params.version,
        request.principal!.readStamp,
      );
      reply.header('etag', row.etag);
      return reply.type(HUJSON_TYPE).send(row.text);
    },
  );
}

/**
 * Two validators: request bodies are validated strictly (a string is never coerced into a
 * boolean, unknown fields are errors, nothing is silently removed), while query strings and
 * path parameters — which are always text — are coerced to the declared types.
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

function makeAjv(coerce: boolean) {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  addFormats.default(ajv);
  return ajv;
}

export function registerValidation(app: FastifyInstance): void {
  const strict = makeAjv(false);
  const coercing = makeAjv(true);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema));
  // A POST without any body (curl -X POST) is an empty object, so optional-only bodies work
  // and a missing required field is reported by name.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.method !== 'GET' && request.method !== 'DELETE') {
      request.body = {};
    }
  });
}

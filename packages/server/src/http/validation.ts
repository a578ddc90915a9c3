/**
 * Two validators: request bodies are validated strictly (a string is never coerced into a
 * boolean, unknown fields are errors, nothing is silently removed), while query strings and
 * path parameters — which are always text — are coerced to the declared types.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { unexpectedBody } from './bodies.js';

function makeAjv(coerce: boolean) {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
    // Errors carry the schema that failed, so a value with a code of its own (`x-problem-code`:
    // a tag, a prefix, a duration) is answered with it (edge/to-api-error.ts). Read only on failure.
    verbose: true,
  });
  addFormats.default(ajv);
  return ajv;
}

export function registerValidation(app: FastifyInstance): void {
  const strict = makeAjv(false);
  const coercing = makeAjv(true);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    onFirstUse(() => (httpPart === 'body' ? strict : coercing).compile(schema)),
  );
  // A POST without any body (curl -X POST) is an empty object, so optional-only bodies work
  // and a missing required field is reported by name; a body sent where none is taken is
  // judged like any other (http/bodies.ts).
  // A callback, not an async function: it runs on every request and never waits.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined) {
      if (request.method !== 'GET' && request.method !== 'DELETE') request.body = {};
      done();
      return;
    }
    done(unexpectedBody(request));
  });
}

/**
 * A validator compiled when a request first needs it, not when the server starts: compiling
 * every route's schemas took a third of `warren serve`'s start, for routes most instances
 * never see. Fastify reads `errors` after a failed check and `schemaEnv` (to let Ajv coerce the
 * request part in place) from the function it was given, so both come from the compiled one.
 */
function onFirstUse(compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validator = ((...args: Parameters<ValidateFunction>) => {
    compiled ??= compile();
    const valid = compiled(...args);
    validator.errors = compiled.errors;
    return valid;
  }) as ValidateFunction;
  Object.defineProperty(validator, 'schemaEnv', {
    get: () => {
      compiled ??= compile();
      return compiled.schemaEnv;
    },
  });
  return validator;
}

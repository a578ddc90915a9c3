/**
 * Two validators: request bodies are validated strictly (a string is never coerced into a
 * boolean, unknown fields are errors, nothing is silently removed), while query strings and
 * path parameters — which are always text — are coerced to the declared types. An integer
 * among them must be written as a plain decimal integer first: Ajv's coercion reads `0x10`,
 * `1e2`, ` 5` and `+5` as numbers, which a script that made a mistake should hear about.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';
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
    onFirstUse(() =>
      httpPart === 'body' ? strict.compile(schema) : decimalIntegersFirst(schema, coercing.compile(schema)),
    ),
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

/** What a decimal integer looks like in a query string or a path: digits, perhaps after a minus. */
const DECIMAL_INTEGER = /^-?[0-9]+$/;

/** The properties of a query string or path schema that hold integers (alone or repeated). */
function integerFields(schema: FastifySchema): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown; items?: { type?: unknown } }> })
    .properties;
  if (!properties) return [];
  return Object.entries(properties)
    .filter(([, field]) => field.type === 'integer' || (field.type === 'array' && field.items?.type === 'integer'))
    .map(([name]) => name);
}

/**
 * Refuses an integer field written in any form but plain decimal before Ajv coerces it, with
 * the error Ajv gives a value that is no number at all (`limit=abc`), so both get one answer.
 */
function decimalIntegersFirst(schema: FastifySchema, validate: ValidateFunction): ValidateFunction {
  const fields = integerFields(schema);
  if (fields.length === 0) return validate;
  const checked = ((data: Record<string, unknown> | undefined, ...rest: unknown[]) => {
    for (const field of fields) {
      const value = data?.[field];
      const values = Array.isArray(value) ? value : [value];
      if (values.some((v) => typeof v === 'string' && !DECIMAL_INTEGER.test(v))) {
        checked.errors = [
          {
            keyword: 'type',
            instancePath: `/${field}`,
            schemaPath: `#/properties/${field}/type`,
            params: { type: 'integer' },
            message: 'must be integer',
          },
        ];
        return false;
      }
    }
    const valid = (validate as (...args: unknown[]) => boolean)(data, ...rest);
    checked.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return Object.defineProperty(checked, 'schemaEnv', { get: () => validate.schemaEnv });
}

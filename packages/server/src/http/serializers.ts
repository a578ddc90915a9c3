/**
 * Response serializers compiled when a route first answers with a status, not when the server
 * starts. Fastify compiles one fast-json-stringify function per route and status at startup; with
 * the whole API that was the largest part of `warren serve`'s start (about 1.5 s of CPU on a busy
 * machine), spent on routes most instances never answer. The compilation is Fastify's own
 * (@fastify/fast-json-stringify-compiler, with the shared schemas), only deferred.
 *
 * A value made by a kept derivation (lib/kept.ts) is the same frozen object for every call until
 * its rows change, so its text is written once per route and status and kept beside it.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { isKept } from '../lib/kept.js';

type SerializerFactory = ReturnType<typeof SerializerSelector>;

export function lazySerializers(): SerializerFactory {
  const select = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = select(externalSchemas, options);
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined;
      const written = new WeakMap<object, string>();
      return (doc) => {
        serialize ??= compile(route);
        if (!isKept(doc)) return serialize(doc);
        let text = written.get(doc);
        if (text === undefined) {
          text = serialize(doc);
          written.set(doc, text);
        }
        return text;
      };
    };
  };
}

/**
 * The serializer of an API whose routes declare no response schema (`/api/v2`: Tailscale's
 * wire, written by its own presenters): JSON.stringify, as Fastify uses for such routes, with a
 * kept value's text written once, as the schema serializers above do. Set with
 * `setReplySerializer` on that API's scope only: it takes precedence over any route's response
 * schema, so a scope whose routes declare one must not use it.
 */
export function keptJsonSerializer(): (payload: unknown) => string {
  const written = new WeakMap<object, string>();
  return (payload) => {
    if (!isKept(payload)) return JSON.stringify(payload);
    let text = written.get(payload);
    if (text === undefined) {
      text = JSON.stringify(payload);
      written.set(payload, text);
    }
    return text;
  };
}

/**
 * `T | null` for scalar fields, written as a type list (`{ "type": ["string", "null"] }`, as
 * OpenAPI 3.1 and JSON Schema allow) rather than `anyOf`. Same meaning for every validator and
 * generator; but the server's response serializer turns `anyOf` into a schema-validator call per
 * value to pick a branch, and a type list into a `typeof` test. A page of 100 audit entries has
 * six such fields each: the validator calls were a large share of the time of every list.
 */
import { type Static, type TInteger, type TString, type TUnsafe, Type } from 'typebox';

export function Nullable<T extends TString | TInteger>(schema: T): TUnsafe<Static<T> | null> {
  const { type, ...rest } = schema as unknown as { type: string } & Record<string, unknown>;
  return Type.Unsafe<Static<T> | null>({ type: [type, 'null'], ...rest });
}

export const Time = Type.String({ format: 'date-time', description: 'RFC 3339 UTC' });
export const NullableTime = Nullable(Time);

/**
 * One of fixed strings, as `{ "type": "string", "enum": [...] }`. The same values as a union of
 * literals, but that union is an `anyOf`, which the response serializer resolves with a
 * schema-validator call per value (each route state, key state and scope of every record).
 */
export function literals<T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options }) as unknown as ReturnType<
    typeof Type.String
  >;
}

/**
 * The record types the client returns are written by hand beside the TypeBox schemas the
 * server answers with (and docs/openapi.json is made from), narrower where a schema's static
 * type is loose (an enumeration is a union of literals, a referenced record its type). Each
 * must still match its schema: the same fields, each optional exactly when the schema's is,
 * nullable whenever the schema's is, and every value the type allows one the schema allows.
 * A field added to a schema cannot be missing from the client's types. `npx tsc` checks these;
 * the test run only names them.
 */
import type {
  AuditEntry,
  AuditEntryBody,
  ConnectionEntry,
  ConnectionEntryBody,
  Device,
  DeviceBody,
  Event,
  EventBody,
  Key,
  KeyBody,
  Me,
  MeBody,
  Netmap,
  NetmapBody,
  Network,
  NetworkBody,
  Peer,
  PeerBody,
  Route,
  RouteBody,
  SsoConfig,
  SsoConfigBody,
  User,
  UserBody,
  UserRef,
  UserRefBody,
  ValidationResult,
  ValidationResultBody,
  Webhook,
  WebhookBody,
  WebhookDelivery,
  WebhookDeliveryBody,
} from '@warren/contract';
import type { Static } from 'typebox';
import { describe, expectTypeOf, it } from 'vitest';

type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];
/** Whether each field that admits null in S (and is not left untyped) admits it in B. */
type NullsKept<B, S> = {
  [K in keyof S & keyof B]: unknown extends S[K] ? true : null extends S[K] ? (null extends B[K] ? true : false) : true;
}[keyof S & keyof B];
/** true when B has S's fields, optional alike, nullable alike, and fits S; else what differs. */
type Matches<B, S> = [keyof B, OptionalKeys<B>, NullsKept<B, S>, B extends S ? true : false] extends [
  keyof S,
  OptionalKeys<S>,
  true,
  true,
]
  ? [keyof S, OptionalKeys<S>] extends [keyof B, OptionalKeys<B>]
    ? true
    : { missing: Exclude<keyof S, keyof B>; optionalInSchema: Exclude<OptionalKeys<S>, OptionalKeys<B>> }
  : {
      extra: Exclude<keyof B, keyof S>;
      optionalHere: Exclude<OptionalKeys<B>, OptionalKeys<S>>;
      nulls: NullsKept<B, S>;
      fits: B extends S ? true : false;
    };

describe('Warren client: record types', () => {
  it('each record type matches its schema', () => {
    expectTypeOf<Matches<DeviceBody, Static<typeof Device>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<UserRefBody, Static<typeof UserRef>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<UserBody, Static<typeof User>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<NetworkBody, Static<typeof Network>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<KeyBody, Static<typeof Key>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<RouteBody, Static<typeof Route>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<ConnectionEntryBody, Static<typeof ConnectionEntry>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<AuditEntryBody, Static<typeof AuditEntry>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<ValidationResultBody, Static<typeof ValidationResult>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<PeerBody, Static<typeof Peer>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<NetmapBody, Static<typeof Netmap>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<EventBody, Static<typeof Event>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<WebhookBody, Static<typeof Webhook>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<WebhookDeliveryBody, Static<typeof WebhookDelivery>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<SsoConfigBody, Static<typeof SsoConfig>>>().toEqualTypeOf<true>();
    expectTypeOf<Matches<MeBody, Static<typeof Me>>>().toEqualTypeOf<true>();
  });
});

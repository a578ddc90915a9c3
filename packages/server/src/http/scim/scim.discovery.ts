/** SCIM's self-description (RFC 7643 §5–7): what this service provider supports. */
import { USER_SCHEMA } from './scim.users.js';

const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

export function serviceProviderConfig(base: string) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    documentationUri: `${base}/docs/SSO.md`,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: 200 },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'API key',
        description: 'A Warren API key with scope users, as Authorization: Bearer wrn_api_…',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/scim/v2/ServiceProviderConfig` },
  };
}

const attribute = (name: string, type: string, extra: Record<string, unknown> = {}) => ({
  name,
  type,
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

const userSchema = (base: string) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
  id: USER_SCHEMA,
  name: 'User',
  description: 'A person of the network',
  attributes: [
    attribute('userName', 'string', { required: true, mutability: 'immutable', uniqueness: 'server' }),
    attribute('displayName', 'string'),
    attribute('name', 'complex', {
      subAttributes: [
        attribute('formatted', 'string'),
        attribute('givenName', 'string'),
        attribute('familyName', 'string'),
      ],
    }),
    attribute('active', 'boolean'),
    attribute('emails', 'complex', { multiValued: true, mutability: 'readOnly' }),
  ],
  meta: { resourceType: 'Schema', location: `${base}/scim/v2/Schemas/${USER_SCHEMA}` },
});

export function schemas(base: string) {
  return { schemas: [LIST], totalResults: 1, itemsPerPage: 1, startIndex: 1, Resources: [userSchema(base)] };
}

/** `GET /Schemas/{id}` (RFC 7644 §4): the schema its listing's `location` names, or none. */
export function schemaById(base: string, id: string) {
  return id === USER_SCHEMA ? userSchema(base) : undefined;
}

const userResourceType = (base: string) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
  id: 'User',
  name: 'User',
  endpoint: '/Users',
  schema: USER_SCHEMA,
  meta: { resourceType: 'ResourceType', location: `${base}/scim/v2/ResourceTypes/User` },
});

export function resourceTypes(base: string) {
  return { schemas: [LIST], totalResults: 1, itemsPerPage: 1, startIndex: 1, Resources: [userResourceType(base)] };
}

/** `GET /ResourceTypes/{id}` (RFC 7644 §4): the resource type its listing's `location` names, or none. */
export function resourceTypeById(base: string, id: string) {
  return id === 'User' ? userResourceType(base) : undefined;
}

export const LIST_SCHEMA = LIST;

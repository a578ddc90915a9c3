/**
 * SCIM users ↔ Warren users: `userName` is the login name, `active` the status (false:
 * suspended), `displayName` (or `name`) the display name. What identity providers send is read
 * leniently where they differ — Entra ID's `"False"`, Okta's value-object PATCH, `Replace` —
 * and strictly where a mistake would change the wrong thing.
 */
import type { UserBody } from '@warren/contract';
import { ScimError } from './scim.errors.js';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';

export function presentScimUser(user: UserBody, base: string) {
  return {
    schemas: [USER_SCHEMA],
    id: user.id,
    userName: user.loginName,
    displayName: user.displayName,
    name: { formatted: user.displayName },
    emails: [{ value: user.loginName, primary: true, type: 'work' }],
    active: user.status === 'active',
    meta: {
      resourceType: 'User',
      created: user.created,
      lastModified: user.created,
      location: `${base}/scim/v2/Users/${user.id}`,
    },
  };
}

/** A SCIM boolean: true/false, or the strings "True"/"False" that Entra ID sends. */
export function scimBoolean(value: unknown, field: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw new ScimError(400, 'invalidValue', `${field} must be a boolean`);
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 254) {
    throw new ScimError(400, 'invalidValue', `${field} must be a non-empty string`);
  }
  return value.trim();
}

/** The display name a SCIM body carries: `displayName`, else `name.formatted`, else given + family. */
export function displayNameOf(body: Record<string, unknown>): string | undefined {
  if (body.displayName !== undefined) return text(body.displayName, 'displayName').slice(0, 128);
  const name = body.name as Record<string, unknown> | undefined;
  if (!name || typeof name !== 'object') return undefined;
  if (name.formatted !== undefined) return text(name.formatted, 'name.formatted').slice(0, 128);
  const parts = [name.givenName, name.familyName].filter((p): p is string => typeof p === 'string' && p !== '');
  return parts.length ? parts.join(' ').slice(0, 128) : undefined;
}

export interface ScimUserInput {
  userName: string;
  displayName?: string;
  active?: boolean;
}

/** The body of POST and PUT /Users. */
export function readScimUser(body: unknown): ScimUserInput {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new ScimError(400, 'invalidSyntax', 'the body must be a SCIM User object');
  }
  const record = body as Record<string, unknown>;
  const displayName = displayNameOf(record);
  return {
    userName: text(record.userName, 'userName'),
    ...(displayName !== undefined ? { displayName } : {}),
    ...(record.active !== undefined ? { active: scimBoolean(record.active, 'active') } : {}),
  };
}

/** Attributes a PATCH may set or remove that Warren does not keep: accepted, nothing changes. */
const UNKEPT = (key: string) =>
  key === 'name.givenname' || key === 'name.familyname' || key === 'externalid' || key.startsWith('emails');

/**
 * What a PATCH changes, from its Operations (RFC 7644 §3.5.2) as Okta and Entra ID send them.
 * `displayName: null` is a removed display name: the user's default comes back.
 */
export function readScimPatch(body: unknown): { displayName?: string | null; active?: boolean } {
  const operations = (body as { Operations?: unknown } | undefined)?.Operations;
  if (!Array.isArray(operations) || operations.length === 0) {
    throw new ScimError(400, 'invalidSyntax', 'a PATCH needs a non-empty Operations array');
  }
  const out: { displayName?: string | null; active?: boolean } = {};
  const remove = (path: string) => {
    const key = path.toLowerCase();
    if (key === 'displayname' || key === 'name' || key === 'name.formatted') out.displayName = null;
    else if (key === 'active') {
      throw new ScimError(400, 'invalidValue', 'active cannot be removed: replace it with false to suspend');
    } else if (key === 'username') {
      throw new ScimError(400, 'mutability', 'userName (the login name) cannot be removed');
    } else if (!UNKEPT(key)) {
      throw new ScimError(400, 'invalidPath', `"${path}" is not an attribute Warren can change`);
    }
  };
  const apply = (path: string, value: unknown) => {
    const key = path.toLowerCase();
    if (key === 'active') out.active = scimBoolean(value, 'active');
    else if (key === 'displayname') out.displayName = text(value, 'displayName').slice(0, 128);
    else if (key === 'name.formatted') out.displayName = text(value, 'name.formatted').slice(0, 128);
    else if (key === 'name') {
      const name = displayNameOf({ name: value });
      if (name !== undefined) out.displayName = name;
    } else if (UNKEPT(key)) {
      // Parts of a name or other attributes Warren does not keep: accepted, nothing to change.
    } else if (key === 'username') {
      throw new ScimError(400, 'mutability', 'userName (the login name) cannot be changed');
    } else {
      throw new ScimError(400, 'invalidPath', `"${path}" is not an attribute Warren can change`);
    }
  };
  for (const operation of operations as { op?: unknown; path?: unknown; value?: unknown }[]) {
    const op = typeof operation?.op === 'string' ? operation.op.toLowerCase() : '';
    if (op === 'remove') {
      // RFC 7644 §3.5.2.2: a remove names its target.
      if (typeof operation.path !== 'string' || operation.path === '') {
        throw new ScimError(400, 'noTarget', 'a remove operation needs a path');
      }
      remove(operation.path);
      continue;
    }
    if (op !== 'replace' && op !== 'add') {
      throw new ScimError(
        400,
        'invalidValue',
        `op "${String(operation?.op)}" is not supported (use add, replace or remove)`,
      );
    }
    if (typeof operation.path === 'string' && operation.path !== '') {
      apply(operation.path, operation.value);
    } else if (operation.value && typeof operation.value === 'object' && !Array.isArray(operation.value)) {
      for (const [path, value] of Object.entries(operation.value as Record<string, unknown>)) apply(path, value);
    } else {
      throw new ScimError(400, 'invalidValue', 'an operation without a path needs an object value');
    }
  }
  return out;
}

/** `userName eq "ana@example.com"`: the one filter identity providers send before creating a user. */
export function readUserNameFilter(filter: string | undefined): string | undefined {
  if (filter === undefined || filter.trim() === '') return undefined;
  const match = /^\s*userName\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(filter);
  if (!match) throw new ScimError(400, 'invalidFilter', 'only filter=userName eq "…" is supported');
  return (match[1] ?? '').replace(/\\(.)/g, '$1').toLowerCase();
}

/**
 * Tags as devices and auth keys carry them. Their syntax is the contract's (`TAG_RE`), checked
 * here once for every caller.
 *
 * Tag ownership for the management API: a tag may be applied (to a device, or to the devices an
 * auth key will enroll) only when the current policy defines it in `tagOwners`. An API key acts
 * as an admin of its network, so any defined tag is allowed; an undefined one is 400 invalid_tag.
 *
 * Removing a tag from tagOwners later does not take it off devices or keys that carry it: the
 * policy decides what a tag may reach, not whether existing devices keep it.
 */
import { TAG_RE } from '@warren/contract';
import { ApiError, invalidTag } from '../../core/errors.js';
import { canApplyTags } from '../../policy/index.js';
import type { Db } from '../../storage/database.js';
import { currentPolicy } from './policy-cache.js';

/** Refuses (400 invalid_tag) the first tag that is not of the tag syntax. */
export function requireTagSyntax(tags: readonly string[]): void {
  for (const tag of tags) if (!TAG_RE.test(tag)) throw invalidTag(tag);
}

/** Tags to store: each of the tag syntax, without repeats, sorted. */
export function checkTags(tags: readonly string[]): string[] {
  requireTagSyntax(tags);
  return [...new Set(tags)].sort();
}

export async function requireOwnedTags(db: Db, networkId: string, tags: readonly string[]): Promise<void> {
  if (tags.length === 0) return;
  const { compiled } = await currentPolicy(db, networkId);
  const check = canApplyTags(compiled, tags, { user: null, isAdminKey: true });
  if (check.ok) return;
  // An API key acts as admin, so only tags missing from tagOwners can be refused here.
  const refused = [...check.unknown, ...check.notOwned];
  const many = refused.length > 1;
  const detail = `${refused.map((t) => `"${t}"`).join(', ')} ${many ? 'are' : 'is'} not in the policy's tagOwners; define ${many ? 'them' : 'it'} there (PUT /v1/acl) first`;
  throw new ApiError('invalid_tag', detail);
}

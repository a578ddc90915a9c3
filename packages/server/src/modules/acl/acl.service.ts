/**
 * Policy rules: the stored text is exactly what was sent (comments and all); a new version is
 * stored only when the one validation that POST /v1/acl/validate also runs finds nothing wrong;
 * `If-Match` is checked inside the transaction that writes, after the network row is locked,
 * so of two writers holding the same ETag exactly one wins.
 *
 * A stored policy takes effect in the same transaction: the netmap epoch is bumped (every
 * device's view is re-derived on its next netmap or heartbeat) and pending routes that the
 * new autoApprovers allow are approved, each with its own audit entry.
 */
import type { ValidationResultBody } from '@warren/contract';
import type { Actor } from '../../core/actor.js';
import type { AppContext, PolicyTextOrigin } from '../../core/context.js';
import { ApiError, notFound } from '../../core/errors.js';
import type { EventDraft } from '../../core/events.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import { entityTagsMatch } from '../../lib/entity-tags.js';
import { keptDerivation } from '../../lib/kept.js';
import { iso } from '../../lib/time.js';
import { policyEtag, withTests } from '../../policy/index.js';
import type { ReadStamp } from '../../storage/compiled-query.js';
import { lockNetworkRow, netmapEpoch } from '../network/epochs.js';
import { NO_DEVICE_CHANGED } from '../network/netmap-changes.js';
import { autoApprovePending } from '../routes/auto-approve.js';
import { approvalEntries, routeEvents } from '../routes/route-events.js';
import {
  insertPolicyVersion,
  policyHead,
  policyVersion,
  policyVersions,
  type StoredVersionRow,
} from './acl.repository.js';
import { type CurrentPolicy, currentPolicy, preparePolicy, rememberPolicy } from './policy-cache.js';
import { compileTransferred, type PreparedPolicy } from './policy-transfer.js';

export interface PolicyVersionBody {
  version: number;
  etag: string;
  created: string;
  createdBy: string | null;
}

export const getPolicy = (ctx: AppContext, networkId: string, stamp?: ReadStamp): Promise<CurrentPolicy> =>
  currentPolicy(ctx.db, networkId, stamp);

/**
 * Validation runs in a worker within the time budget (policy-pool.ts): never on the event loop.
 * `origin.asTailscale`: the text came through Tailscale's API and is read as Tailscale reads it.
 */
export function validatePolicyText(
  ctx: AppContext,
  text: string,
  origin: PolicyTextOrigin = {},
): Promise<ValidationResultBody> {
  return ctx.policies.validate(text, origin);
}

/**
 * The current policy's rules against `tests` sent alone, in place of its own (Tailscale's "run
 * ACL tests" form of validation); nothing is stored. Lines in the answer are the stored file's.
 */
export async function runPolicyTests(
  ctx: AppContext,
  networkId: string,
  tests: readonly unknown[],
  stamp?: ReadStamp,
): Promise<ValidationResultBody> {
  const current = await getPolicy(ctx, networkId, stamp);
  return ctx.policies.validate(withTests(current.text, tests));
}

export async function replacePolicy(
  ctx: AppContext,
  actor: Actor,
  text: string,
  ifMatch: string | undefined,
  ifNoneMatch?: string,
  origin: PolicyTextOrigin = {},
): Promise<CurrentPolicy> {
  const { networkId } = actor;
  const result = await ctx.policies.prepare(text, origin);
  if (!result.valid) {
    const n = result.errors.length;
    throw new ApiError('policy_invalid', `the policy has ${n} problem${n === 1 ? '' : 's'}`, {
      errors: result.errors,
    });
  }
  // Valid and within the budget. The worker read the text (the costly part) and sent what it
  // read; this thread only builds the indexes it serves netmaps from, a slice at a time, so a
  // large policy never holds the event loop for long.
  const prepared = result.prepared as PreparedPolicy;
  const compiled = await compileTransferred(prepared);
  const meaning = prepared.meaning;
  const etag = policyEtag(text);
  const stored = await unitOfWork(ctx, actor, 'policy.update', async (trx, now, changes) => {
    // The network row's lock first (as every netmap-changing transaction takes it): on
    // PostgreSQL it serialises writers of this network, so the version read below is the one we
    // replace. Only taken here: the epoch moves below, once the change is known to be one.
    await lockNetworkRow(trx, networkId);
    const head = await policyHead(trx, networkId);
    if (ifMatch !== undefined && !(head && entityTagsMatch(ifMatch, head.etag, 'strong'))) {
      throw new ApiError(
        'precondition_failed',
        `the policy changed since ETag ${ifMatch} was read (it is now ${head?.etag ?? 'absent'}); read it again and reapply your edit`,
      );
    }
    // RFC 9110 §13.1.2: on a PUT, If-None-Match holds only while no listed ETag (or, for `*`,
    // no policy at all) is current. Every network has a policy, so `*` never holds.
    if (ifNoneMatch !== undefined && head && entityTagsMatch(ifNoneMatch, head.etag, 'weak')) {
      throw new ApiError('precondition_failed', `If-None-Match ${ifNoneMatch} names the current policy (${head.etag})`);
    }
    // The text stored already (the ETag is its digest) is no transition: no new version, no
    // policy.updated. Its autoApprovers still run, as a PUT has always applied them to routes
    // that became approvable since (a tag or a role given later).
    const unchanged = head?.etag === etag;
    const version = unchanged ? head.version : (head?.version ?? 0) + 1;
    if (!unchanged)
      await insertPolicyVersion(trx, { networkId, version, text, etag, now, createdBy: actor.name ?? '' });
    const approved = (await autoApprovePending(trx, networkId, compiled, now)).map((a) => a.routeId);
    const value = preparePolicy({ version, etag }, text, { compiled, meaning });
    // A policy that approved no route changed no device's row: every instance then carries its
    // view over instead of reading every device again (netmap.cache.ts), keeping it whole for a
    // new text of the same meaning (comments, layout) and its devices for any other. The text
    // stored already that approved nothing changes nothing, and moves no epoch.
    if (approved.length > 0) await changes.touch(netmapEpoch);
    else if (!unchanged) await changes.touch(netmapEpoch, NO_DEVICE_CHANGED);
    const events: EventDraft[] = [
      ...(unchanged ? [] : [{ type: 'policy.updated' as const, data: { etag, version } }]),
      ...(await routeEvents(trx, networkId, now, { approved })),
    ];
    return { value, target: 'acl', events, also: approvalEntries(approved) };
  });
  rememberPolicy(networkId, stored);
  return stored;
}

/**
 * GET /v1/acl/history's body, made once per kept answer (lib/kept.ts), so its text is written
 * once too: the dates of every version formatted and the list serialised on each call cost
 * more than the rest of the call's own work. A new version is a new answer.
 */
const presentHistory = keptDerivation(([rows]: readonly [readonly StoredVersionRow[]]) => ({
  value: {
    versions: rows.map(
      (row): PolicyVersionBody => ({
        version: Number(row.version),
        etag: row.etag,
        created: iso(Number(row.created_at)),
        createdBy: row.created_by,
      }),
    ),
  },
  until: Number.POSITIVE_INFINITY,
}));

export async function policyHistory(
  ctx: AppContext,
  networkId: string,
  stamp?: ReadStamp,
): Promise<{ versions: PolicyVersionBody[] }> {
  return presentHistory([await policyVersions(ctx.db, networkId, stamp)], 0);
}

export async function policyAtVersion(ctx: AppContext, networkId: string, version: number, stamp?: ReadStamp) {
  const row = await policyVersion(ctx.db, networkId, version, stamp);
  if (!row) throw notFound(`policy version ${version} does not exist`);
  return row;
}

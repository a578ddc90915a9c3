/**
 * `tailscale up` without an auth key, on the protocol's side (modules/devices/login/ holds the
 * rules of approving it):
 *  1. the register request is answered with `AuthURL` `{public URL}/register/{token}` — 256
 *     random bits, stored as their SHA-256, single use, 15 minutes — which the client prints;
 *  2. the client then registers again with that URL as `Followup`, and the request waits until
 *     a person approves the machine in the console (or refuses, or the URL expires). The wait
 *     reads the login's row when the login's end is signalled, on whichever instance it was
 *     approved (modules/devices/login/login-signals.ts), and when the URL expires; nothing
 *     reads it in between.
 * Only the machine that started a login may wait on it: the Noise session proves its key.
 */
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../../core/context.js';
import { hashSecret } from '../../../lib/secrets.js';
import { onLoginEnded } from '../../../modules/devices/login/login-signals.js';
import { MACHINE_LOGIN_LIFETIME_MS, stateOf } from '../../../modules/devices/login/machine-login.service.js';
import { insertMachineLogin, machineLoginByHash } from '../../../modules/devices/login/machine-logins.repository.js';
import { waitForEnd } from '../../../modules/devices/login/wait-for-end.js';
import type { Hostinfo } from '../map-request.js';

/** The path of the console's login page; the token follows it. */
export const LOGIN_PATH = '/register/';

export interface LoginRequest {
  NodeKey: string;
  OldNodeKey?: string;
  Followup?: string;
  Ephemeral?: boolean;
  Hostinfo?: Hostinfo | null;
}

/** The request behind a login: who sent it, and when it goes away. */
export interface LoginCall {
  /** The client's address: starting logins is limited per address, as anonymous API calls are. */
  clientAddr: string;
  /** Settles when the client goes away (a follow-up stops waiting then). */
  closed: Promise<void>;
}

export type LoginOutcome =
  | { kind: 'url'; authUrl: string }
  | { kind: 'limited'; retryAfter: number }
  | { kind: 'approved' }
  | { kind: 'refused'; message: string }
  | { kind: 'closed' };

/** What a client said of itself, trimmed and cut to what a device record holds. */
export function clipped(text: string | undefined, max: number, fallback: string): string {
  const t = (text ?? '').trim();
  return t ? t.slice(0, max) : fallback;
}

/** Starts a login for this machine and node key; the URL the person opens. */
export async function startLogin(
  ctx: AppContext,
  machineKey: string,
  request: LoginRequest,
  oldNodeKey: string | null,
  call: LoginCall,
): Promise<LoginOutcome> {
  const base = ctx.settings.publicUrl;
  if (!base) {
    return {
      kind: 'refused',
      message:
        'logging in without an auth key needs the server public URL (WARREN_PUBLIC_URL); use tailscale up --auth-key wrn_auth_… meanwhile',
    };
  }
  // Noise machine keys cost nothing to make: the address is what bounds the rows one party adds.
  const decision = await ctx.limiter.hit(`login:${call.clientAddr}`, ctx.settings.anonymousRateLimit);
  if (!decision.allowed) return { kind: 'limited', retryAfter: decision.resetSeconds };
  const token = randomBytes(32).toString('base64url');
  const now = ctx.clock.now();
  const hostinfo = request.Hostinfo ?? {};
  await insertMachineLogin(ctx.db, {
    token_hash: hashSecret(token),
    machine_key: machineKey,
    node_key: request.NodeKey,
    hostname: clipped(hostinfo.Hostname, 63, 'device'),
    os: clipped(hostinfo.OS, 32, 'unknown'),
    client_version: hostinfo.IPNVersion ? hostinfo.IPNVersion.slice(0, 64) : null,
    request_tags: JSON.stringify([...new Set(hostinfo.RequestTags ?? [])].sort()),
    ephemeral: request.Ephemeral ? 1 : 0,
    old_node_key: oldNodeKey,
    created_at: now,
    expires_at: now + MACHINE_LOGIN_LIFETIME_MS,
  });
  return { kind: 'url', authUrl: `${base}${LOGIN_PATH}${token}` };
}

/** The token of a follow-up URL, whatever host it names (the client repeats what it was given). */
function tokenOf(followup: string): string | undefined {
  try {
    const { pathname } = new URL(followup);
    if (!pathname.startsWith(LOGIN_PATH)) return undefined;
    const token = pathname.slice(LOGIN_PATH.length);
    return /^[A-Za-z0-9_-]{16,128}$/.test(token) ? token : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Waits for the login of a follow-up to end. An unknown, foreign or expired URL starts a new
 * login (the client prints the new URL). The wait ends when the client goes away.
 */
export async function awaitLogin(
  ctx: AppContext,
  machineKey: string,
  request: LoginRequest & { Followup: string },
  call: LoginCall,
): Promise<LoginOutcome> {
  const token = tokenOf(request.Followup);
  const tokenHash = token && hashSecret(token);
  const fresh = () => startLogin(ctx, machineKey, request, request.OldNodeKey ?? null, call);
  if (!tokenHash) return fresh();
  return waitForEnd<LoginOutcome | 'fresh'>({
    listen: (wake) => onLoginEnded(ctx.changes, tokenHash, wake),
    closed: call.closed,
    now: () => ctx.clock.now(),
    look: async (gone) => {
      const row = await machineLoginByHash(ctx.db, tokenHash);
      if (!row || row.machine_key !== machineKey || row.node_key !== request.NodeKey) return { done: 'fresh' };
      const state = stateOf(row, ctx.clock.now());
      if (state === 'approved') return { done: { kind: 'approved' } };
      if (state === 'refused') return { done: { kind: 'refused', message: row.refusal ?? 'the login was refused' } };
      if (state === 'expired') return { done: 'fresh' };
      return gone ? { done: { kind: 'closed' } } : { expiresAt: row.expires_at };
    },
  }).then((outcome) => (outcome === 'fresh' ? fresh() : outcome));
}

/**
 * The URLs a Tailscale client fetches over its Noise channel when an SSH connection arrives
 * under a `check` rule (the rule's `holdAndDelegate`, policy/ssh-policy.ts checkActionUrl), as
 * tailscaled v1.102.5 does in `ssh/tailssh`:
 *  - `/machine/ssh/action/{network}/{src}/to/{dst}?src_ip=…&local_user=…&period=…`, the
 *    client's node ids and the source's address filled in: `accept` when the source device was
 *    confirmed for this destination and user within the period; otherwise a message with the
 *    console URL the person connecting opens, and a second URL to wait on;
 *  - `/machine/ssh/check/{network}/{token}`: held until the source's owner confirms (then
 *    `accept`) or the check expires (then `reject`). The client fetches it again when the
 *    request breaks.
 * Only the destination may ask: the Noise session proves its machine key, and the device that
 * key belongs to must be the one the URL names.
 */
import type { AppContext } from '../../core/context.js';
import { addrIndexOf } from '../../modules/devices/addresses.js';
import { awaitSshCheck, sshCheckFor } from '../../modules/devices/login/ssh-check.service.js';
import { MAX_CHECK_PERIOD_MS, SSH_ACCEPT, type TailcfgSshAction } from '../../policy/index.js';
import { deviceAtQuery, devicesOfMachineQuery } from './ssh-devices.repository.js';
import { numericId } from './tailcfg.js';

export const SSH_CHECK_PATH = '/ssh-check/';

const reject = (message: string): TailcfgSshAction => ({ reject: true, message: `${message}\n` });

/**
 * The server's URL as the client must name it in a URL it fetches over Noise: with `https`
 * whatever the public URL's scheme. The client's Noise transport is reached through its TLS
 * dial, which is the Noise channel to its control server; a plain `http` URL would be dialled
 * directly, unencrypted, and never reach the channel (tailscaled v1.102.5, control/ts2021).
 */
export const noiseBase = (base: string): string => base.replace(/^http:/, 'https:');

/**
 * The prefix of check rules' action URLs in the maps of network `networkId` (policy/ssh-policy.ts
 * checkActionUrl): the network is in the URL so that the destination is found by its machine
 * key within it, one index probe, rather than among every network's devices.
 */
export const checkActionBase = (ctx: AppContext, networkId: string): string =>
  `${noiseBase(ctx.settings.publicUrl ?? '')}/machine/ssh/action/${networkId}`;

/** Whether Warren serves this Noise path here. */
export const isSshActionPath = (route: string) =>
  route.startsWith('/machine/ssh/action/') || route.startsWith('/machine/ssh/check/');

/** The device of this machine key in the network that the client names by numeric id. */
async function deviceOfMachine(ctx: AppContext, networkId: string, machine: string, id: number) {
  const rows = await devicesOfMachineQuery(ctx.db, networkId, machine).execute();
  return rows.find((r) => numericId(r.id) === id);
}

/** The source device: the one at the connection's address, if the client's id names it. */
async function sourceDevice(ctx: AppContext, networkId: string, address: string | null, id: number) {
  const index = address === null ? undefined : addrIndexOf(address);
  if (index === undefined) return undefined;
  const row = await deviceAtQuery(ctx.db, networkId, index).executeTakeFirst();
  return row && numericId(row.id) === id ? row : undefined;
}

const ID = '([A-Za-z0-9_-]{1,64})';
const ACTION_PATH = new RegExp(`^/machine/ssh/action/${ID}/(\\d{1,16})/to/(\\d{1,16})$`);
const CHECK_PATH = new RegExp(`^/machine/ssh/check/${ID}/([A-Za-z0-9_-]{16,128})$`);

/** The next SSHAction for the request at `path`; `closed` settles when the client goes away. */
export async function sshAction(
  ctx: AppContext,
  machine: string,
  path: string,
  closed: Promise<void>,
): Promise<{ status: number; action?: TailcfgSshAction; text?: string }> {
  const url = new URL(path, 'http://control');
  const base = ctx.settings.publicUrl;
  const action = ACTION_PATH.exec(url.pathname);
  if (action) {
    const [, networkId, srcId, dstId] = action;
    const dst = await deviceOfMachine(ctx, networkId, machine, Number(dstId));
    if (!dst) return { status: 404, text: 'the destination is not this machine' };
    if (!base) return { status: 200, action: reject('check rules need the server public URL (WARREN_PUBLIC_URL)') };
    const src = await sourceDevice(ctx, networkId, url.searchParams.get('src_ip'), Number(srcId));
    const localUser = url.searchParams.get('local_user') ?? '';
    if (!src || !localUser)
      return { status: 200, action: reject('Warren does not know the source of this connection') };
    // The period is the rule's (written by Warren into the URL), bounded as the policy bounds it.
    const periodS = Math.max(0, Number(url.searchParams.get('period')) || 0);
    const outcome = await sshCheckFor(ctx, {
      networkId,
      srcDeviceId: src.id,
      dstDeviceId: dst.id,
      localUser: localUser.slice(0, 256),
      periodMs: Math.min(MAX_CHECK_PERIOD_MS, periodS * 1000),
    });
    if ('confirmed' in outcome) return { status: 200, action: SSH_ACCEPT };
    return {
      status: 200,
      action: {
        message: `# Tailscale SSH requires an additional check.\n# To authenticate, visit: ${base}${SSH_CHECK_PATH}${outcome.token}\n`,
        holdAndDelegate: `${noiseBase(base)}/machine/ssh/check/${networkId}/${outcome.token}?dst=${dstId}`,
      },
    };
  }
  const check = CHECK_PATH.exec(url.pathname);
  const dst = check && (await deviceOfMachine(ctx, check[1], machine, Number(url.searchParams.get('dst'))));
  if (!check || !dst) return { status: 404, text: `${url.pathname} is not served by Warren` };
  const state = await awaitSshCheck(ctx, check[2], dst.id, closed);
  if (state === 'approved') return { status: 200, action: SSH_ACCEPT };
  if (state === 'expired') return { status: 200, action: reject('the SSH session was not confirmed in time') };
  if (state === 'unknown') return { status: 200, action: reject('this SSH check is unknown; connect again') };
  return { status: 499 };
}

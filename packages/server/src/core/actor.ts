/**
 * Who makes a change. Services take an Actor instead of an HTTP request, so the same rule
 * runs for an API call, a device, an operator command and the server's own sweepers, and
 * the audit entry and events of the change name the same actor.
 */
import { randomBytes } from 'node:crypto';
import type { Scope } from '@warren/contract';

/** `key`: an API key; `user`: a console session; `device`: the node protocol; `system`: the server itself or an operator command. */
export type ActorType = 'key' | 'user' | 'device' | 'system';

/** The HTTP call behind a change, for the audit entry's method, path and status. */
export interface RequestMeta {
  method: string;
  /** The request target without its query string. */
  path: string;
  /** The status the call answers with when the change commits. */
  status: number;
  /** Told when the call's audit entry was written with the change (so it is not written twice). */
  onAudited?: () => void;
  /**
   * Writes the queued entries of the network's calls this server answered before, so that the
   * change's entry, written with the change, is numbered after them.
   */
  recordEarlierCalls?: (networkId: string) => Promise<void>;
}

export interface Actor {
  networkId: string;
  type: ActorType;
  /** key_…, usr_…, dev_…; null for the system. */
  id: string | null;
  name: string | null;
  requestId: string;
  /** The caller's address; empty for the system. */
  clientAddr: string;
  /** Absent when no HTTP call made the change (sweepers, presence, operator commands). */
  request?: RequestMeta;
  /** What an API key may grant (key actors only): the keys service's no-escalation rules read it. */
  grant?: {
    scopes: readonly Scope[];
    expiresAt: number;
    /**
     * An OAuth client's token: its Tailscale scopes, and the tags the auth keys it creates
     * must carry (Tailscale's rule: a client has no user, so its devices are tagged).
     */
    oauth?: { scopes: readonly string[]; tags: readonly string[] };
  };
}

/** The public face of an actor, as events carry it. */
export function actorRef(actor: Actor): { type: ActorType; id: string | null; name: string | null } {
  return { type: actor.type, id: actor.id, name: actor.name };
}

/**
 * The server acting on its own (a sweeper, the presence detector) or an operator command run
 * on the server's machine (`warren keys set-limit`). `name` says which, in the audit entry's
 * path and the event's actor name.
 */
export function systemActor(networkId: string, name: string): Actor {
  return {
    networkId,
    type: 'system',
    id: null,
    name,
    requestId: `sys_${randomBytes(8).toString('hex')}`,
    clientAddr: '',
  };
}

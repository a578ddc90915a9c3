/**
 * People: single sign-on settings and the caller's own record (`GET /v1/me`).
 */
import { type Static, Type } from 'typebox';
import { type ROLES, SCOPES } from './formats.js';
import { literals } from './nullable.js';

const closed = { additionalProperties: false } as const;
const scopeList = Type.Array(literals(SCOPES));

export const SetSsoBody = Type.Object(
  {
    issuer: Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'the OpenID provider, e.g. https://id.example.com/realms/acme',
    }),
    clientId: Type.String({ minLength: 1, maxLength: 256 }),
    clientSecret: Type.String({ minLength: 1, maxLength: 1024, description: 'stored to sign in; never returned' }),
    allowedDomains: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 64 })),
    enforce: Type.Optional(Type.Boolean()),
  },
  closed,
);
export type SetSsoRequest = Static<typeof SetSsoBody>;

export const SsoConfig = Type.Object(
  {
    issuer: Type.String(),
    clientId: Type.String(),
    allowedDomains: Type.Array(Type.String()),
    enforce: Type.Boolean(),
    redirectUri: Type.String({ description: 'register this URI with the provider: {base}/auth/callback' }),
    updated: Type.String({ format: 'date-time' }),
  },
  { $id: 'SsoConfig', description: 'single sign-on of the network; the client secret is never returned' },
);
export interface SsoConfigBody {
  issuer: string;
  clientId: string;
  allowedDomains: string[];
  enforce: boolean;
  redirectUri: string;
  updated: string;
}

export const Me = Type.Object(
  {
    type: Type.Union([Type.Literal('user'), Type.Literal('key')]),
    network: Type.Object({ id: Type.String(), name: Type.String() }),
    user: Type.Union([Type.Ref('User'), Type.Null()]),
    key: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()]),
    scopes: scopeList,
    ownDevicesOnly: Type.Boolean({ description: 'a member: may read and delete their own devices, nothing else' }),
    csrfToken: Type.Optional(
      Type.String({ description: 'sessions only: send it as X-CSRF-Token on every unsafe method' }),
    ),
    expires: Type.String({ format: 'date-time' }),
  },
  { $id: 'Me', description: 'the caller: the signed-in user of a console session, or the API key' },
);
/** A person of the network (the `User` schema of schemas.ts). */
export interface UserBody {
  id: string;
  loginName: string;
  displayName: string;
  role: (typeof ROLES)[number];
  status: string;
  created: string;
  lastSeen: string | null;
  deviceCount: number;
}
export interface MeBody {
  type: 'user' | 'key';
  network: { id: string; name: string };
  user: UserBody | null;
  key: { id: string; name: string } | null;
  scopes: (typeof SCOPES)[number][];
  ownDevicesOnly: boolean;
  csrfToken?: string;
  expires: string;
}

/**
 * `GET /auth/register/{token}` (console sessions only): the machine a Tailscale client's login
 * URL names, for the person who approves it, and how the login stands.
 */
export interface MachineLoginBody {
  state: 'pending' | 'approved' | 'refused' | 'expired';
  hostname: string;
  os: string;
  clientVersion: string | null;
  machineKey: string;
  nodeKey: string;
  requestedTags: string[];
  ephemeral: boolean;
  created: string;
  expires: string;
  /**
   * The viewer's device whose login this renews when the viewer approves it (it held the
   * machine's previous node key, or, after `tailscale logout`, it is the one the machine enrolled
   * last); null when there is none or it is another user's, since approved by anyone but its
   * user the machine becomes a new device.
   */
  renews: { id: string; name: string } | null;
  /** The device the approval made (in the viewer's network). */
  deviceId: string | null;
  /** Why it was refused (tags the user does not own), as the client was told. */
  refusal: string | null;
  /** Whether the viewer may log this machine in for another user (role table: `keys`). */
  mayChooseUser: boolean;
}

/**
 * `GET /auth/ssh-check/{token}` (console sessions only): a Tailscale SSH connection waiting
 * under a `check` rule, for its source device's owner to confirm, and how it stands.
 */
export interface SshCheckBody {
  state: 'pending' | 'approved' | 'expired';
  /** The device the connection comes from, and the login of its owner (who alone may confirm). */
  source: { id: string; name: string; owner: string | null };
  /** The device it logs in to, and as which local user. */
  destination: { id: string; name: string };
  localUser: string;
  /** How long a confirmation lets the same source in again, in seconds (0: this connection only). */
  periodSeconds: number;
  created: string;
  expires: string;
  /** Whether the viewer is the source's owner, who may confirm it. */
  mayApprove: boolean;
}

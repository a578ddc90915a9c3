import { readFileSync } from 'node:fs';

/**
 * Flags and environment → typed config. Nothing else reads process.env.
 * Precedence: flag, then environment variable, then default.
 */
export interface ServeConfig {
  host: string;
  port: number;
  db: string;
  /** Webhooks may reach loopback, private and link-local addresses, over plain http too. */
  webhooksAllowPrivate: boolean;
  /** Single sign-on may use an issuer over plain http (WARREN_SSO_ALLOW_HTTP=true), for development. */
  ssoAllowHttp: boolean;
  /** The address browsers reach Warren at (single sign-on redirect URI, sign-in links); WARREN_PUBLIC_URL. */
  publicUrl?: string;
  /** The embedded DERP relay (--derp, WARREN_DERP=1) and its STUN port (null: no STUN). */
  derp?: { stunPort: number | null };
  /** The DERP map Tailscale clients get (tailcfg.DERPMap), read from the file WARREN_DERP_MAP names. */
  derpMap?: unknown;
  /** Processor time validating one policy may use before it is refused (ms); WARREN_POLICY_TIME_BUDGET_MS. */
  policyTimeBudgetMs?: number;
}

export const DEFAULT_DB = 'sqlite:./data/warren.db';

export function serveConfig(
  flags: {
    host?: string;
    port?: string;
    db?: string;
    webhooksAllowPrivate?: boolean;
    derp?: boolean;
    derpStunPort?: string;
  },
  env: NodeJS.ProcessEnv = process.env,
): ServeConfig {
  const port = portNumber(flags.port ?? env.WARREN_PORT ?? '8080', '--port or WARREN_PORT');
  const derp = flags.derp ?? ['1', 'true'].includes(env.WARREN_DERP ?? '');
  const stunText = flags.derpStunPort ?? env.WARREN_DERP_STUN_PORT ?? '3478';
  return {
    ...(derp
      ? {
          derp: {
            stunPort: stunText === 'off' ? null : portNumber(stunText, '--derp-stun-port or WARREN_DERP_STUN_PORT'),
          },
        }
      : {}),
    host: flags.host ?? env.WARREN_HOST ?? '127.0.0.1',
    port,
    db: databaseUrl(flags.db, env),
    webhooksAllowPrivate: flags.webhooksAllowPrivate ?? env.WARREN_WEBHOOKS_ALLOW_PRIVATE === 'true',
    ssoAllowHttp: env.WARREN_SSO_ALLOW_HTTP === 'true',
    ...(env.WARREN_PUBLIC_URL ? { publicUrl: publicUrl(env.WARREN_PUBLIC_URL) } : {}),
    ...(env.WARREN_DERP_MAP ? { derpMap: derpMapFile(env.WARREN_DERP_MAP) } : {}),
    ...(env.WARREN_POLICY_TIME_BUDGET_MS ? { policyTimeBudgetMs: milliseconds(env.WARREN_POLICY_TIME_BUDGET_MS) } : {}),
  };
}

function portNumber(text: string, source: string): number {
  const port = /^[0-9]{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 0 && port <= 65535))
    throw new Error(`invalid port "${text}" (${source}: a whole number from 0 to 65535)`);
  return port;
}

/** WARREN_POLICY_TIME_BUDGET_MS: a whole number of milliseconds, at least 100. */
function milliseconds(text: string): number {
  const ms = /^[0-9]{1,7}$/.test(text) ? Number(text) : Number.NaN;
  if (!(ms >= 100))
    throw new Error(`invalid WARREN_POLICY_TIME_BUDGET_MS "${text}" (whole milliseconds, at least 100)`);
  return ms;
}

/** The database URL of a flag, else WARREN_DB, else the default; an unknown kind is refused here. */
export function databaseUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const url = flag ?? env.WARREN_DB ?? DEFAULT_DB;
  if (!/^(sqlite:.|postgres(ql)?:\/\/)/.test(url)) {
    throw new Error(`unsupported database URL "${url}" (use sqlite:PATH, sqlite::memory: or postgres://…)`);
  }
  return url;
}

export function logLevel(env: NodeJS.ProcessEnv = process.env): string {
  return env.WARREN_LOG_LEVEL ?? 'info';
}

/** WARREN_DERP_MAP: a file holding a DERP map as JSON (`{ "Regions": { "1": { … } } }`). */
function derpMapFile(path: string): unknown {
  let map: unknown;
  try {
    map = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`WARREN_DERP_MAP "${path}" is not a readable JSON file: ${(error as Error).message}`);
  }
  if (typeof map !== 'object' || map === null || typeof (map as { Regions?: unknown }).Regions !== 'object') {
    throw new Error(`WARREN_DERP_MAP "${path}" must hold a DERP map: { "Regions": { … } }`);
  }
  return map;
}

/** WARREN_PUBLIC_URL: an http(s) origin, optionally with a path, without a query. */
function publicUrl(text: string): string {
  const ok = /^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(text);
  if (!ok) throw new Error(`invalid WARREN_PUBLIC_URL "${text}" (e.g. https://warren.example.com)`);
  return text.replace(/\/+$/, '');
}

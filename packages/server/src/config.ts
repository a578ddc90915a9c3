/**
 * Flags and environment → typed config. Nothing else reads process.env.
 * Precedence: flag, then environment variable, then default.
 */
export interface ServeConfig {
  host: string;
  port: number;
  db: string;
}

export const DEFAULT_DB = 'sqlite:./data/warren.db';

export function serveConfig(
  flags: { host?: string; port?: string; db?: string },
  env: NodeJS.ProcessEnv = process.env,
): ServeConfig {
  const portText = flags.port ?? env.WARREN_PORT ?? '8080';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port "${portText}"`);
  return {
    host: flags.host ?? env.WARREN_HOST ?? '127.0.0.1',
    port,
    db: flags.db ?? env.WARREN_DB ?? DEFAULT_DB,
  };
}

export function databaseUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return flag ?? env.WARREN_DB ?? DEFAULT_DB;
}

export function logLevel(env: NodeJS.ProcessEnv = process.env): string {
  return env.WARREN_LOG_LEVEL ?? 'info';
}

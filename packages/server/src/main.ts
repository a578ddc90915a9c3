/**
 * `warren serve`: config → storage (migrated) → first network if the database is empty →
 * buildApp → listen. SIGTERM/SIGINT stop accepting, finish in-flight requests, flush the
 * audit log and close the database. What the command is for (the first API key, the address
 * it serves on) goes to `out` (stdout); request logs are pino JSON lines on stderr, so
 * `warren serve > banner.txt` keeps the key apart from the log.
 */
import { buildApp } from './app.js';
import { DEFAULT_DB, logLevel, type ServeConfig } from './config.js';
import { logDestination } from './lib/log-destination.js';
import { bootstrapIfEmpty, FIRST_NETWORK } from './modules/tenants/tenants.service.js';
import { openStorage, type Storage } from './storage/database.js';

/** Connections the kernel may queue before the server accepts them (see listen below). */
const LISTEN_BACKLOG = 4096;

/** What the command that serves knows and the configuration does not. */
export interface ServeOptions {
  /** The console's build (default packages/console/dist); a packaged command ships its own. */
  consoleDir?: string;
  /** How the banner spells the command: `warren`, or `npx warren` in a checkout. */
  command?: string;
}

export async function serve(
  config: ServeConfig,
  out: NodeJS.WritableStream = process.stdout,
  options: ServeOptions = {},
): Promise<() => Promise<void>> {
  const storage = await openDatabase(config.db);
  const created = await bootstrapIfEmpty(storage.db, Date.now());
  // Request logs go to stderr asynchronously: a synchronous write per request was a tenth of a
  // call's time under load; lines logged while a write is in flight are written together.
  const logStream = logDestination(2);
  const app = await buildApp({
    storage,
    logger: { level: logLevel(), stream: logStream },
    ...(options.consoleDir ? { console: { dir: options.consoleDir } } : {}),
    settings: {
      webhooksAllowPrivate: config.webhooksAllowPrivate,
      ssoAllowHttp: config.ssoAllowHttp,
      ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
      ...(config.derpMap ? { derpMap: config.derpMap } : {}),
      ...(config.policyTimeBudgetMs ? { policyTimeBudgetMs: config.policyTimeBudgetMs } : {}),
    },
    relay: config.derp ?? false,
  });
  // A fleet reconnecting at once (a restart, a network blip) must queue, not be dropped: with
  // Node's default backlog of 511, SYNs past it were refused and retried by the kernel after 1,
  // 3, 7, 15 s, enough for agents' calls to time out. 4,096 is Linux's default cap (somaxconn),
  // which Go servers such as Headscale's and NetBird's get by default; the kernel caps it anyway.
  const urlOf = (port: number) => `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  try {
    await app.listen({ host: config.host, port: config.port, backlog: LISTEN_BACKLOG });
    await app.embeddedRelay?.listenStun(config.host);
  } catch (error) {
    // The first network exists from here on: a start that cannot listen (a port in use, one
    // below 1024) still shows its key, or no start ever would, the database being no longer empty.
    if (created) out.write(firstKeyBanner(created, config, urlOf(config.port), options.command));
    await app.close();
    await storage.close();
    throw error;
  }
  const address = app.server.address();
  const url = urlOf(typeof address === 'object' && address ? address.port : config.port);
  if (created) out.write(firstKeyBanner(created, config, url, options.command));
  out.write(`Warren is serving on ${url} (database ${redact(config.db)})\n`);
  out.write(`The console: ${url}/ (sign in with a one-time link or single sign-on)\n`);
  if (config.derp) {
    const stun =
      config.derp.stunPort === null ? 'no STUN' : `STUN on UDP port ${app.embeddedRelay?.region().Nodes[0]?.STUNPort}`;
    out.write(`The embedded DERP relay: ${url}/derp (${stun})\n`);
  }

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await app.close(); // waits for in-flight requests, then flushes the audit log
      logStream.flushSync();
      await storage.close();
    })();
    return stopping;
  };
  return stop;
}

/** The first network's API key, shown this once, and how to use it. */
function firstKeyBanner(
  created: { networkId: string; apiKey: string },
  config: ServeConfig,
  url: string,
  command: string | undefined,
): string {
  return [
    '',
    `Warren created the network "default" (${created.networkId}).`,
    'Its first API key (scope "all", valid for 90 days) is shown only this once — keep it:',
    '',
    `  ${created.apiKey}`,
    '',
    'Use it from a shell:',
    `  export WARREN_URL=${url} WARREN_API_KEY=${created.apiKey}`,
    '',
    'Sign in to the console as the owner (prints a one-time link, valid 10 minutes):',
    `  ${consoleLoginCommand(config, url, command)}`,
    '',
    '',
  ].join('\n');
}

/**
 * The command that prints the owner's sign-in link, with --db and --url only where this server
 * differs from the CLI's defaults, so that it can be pasted as printed (a database password
 * is shown as ***, as everywhere else).
 */
export function consoleLoginCommand(config: ServeConfig, url: string, command = 'warren'): string {
  const args = ['console', 'login', '--network', FIRST_NETWORK.name, '--user', FIRST_NETWORK.ownerEmail];
  if (config.db !== DEFAULT_DB) args.push('--db', redact(config.db));
  const browserUrl = config.publicUrl ?? url;
  if (browserUrl !== DEFAULT_URL) args.push('--url', browserUrl);
  return [command, ...args.map(shellWord)].join(' ');
}

const DEFAULT_URL = 'http://127.0.0.1:8080';

/** A word as a POSIX shell reads it back: quoted only when it holds something special. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Never print a database password, in the URL's user part or in its query (`?password=`). */
export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@').replace(/([?&]password=)[^&]*/gi, '$1***');
}

/**
 * Opens (and migrates) the database of a URL. The driver's own words alone (`file is not a
 * database`, `connect ECONNREFUSED 127.0.0.1:5432`) do not say that the database is what
 * failed, nor which one; this names it, password hidden.
 */
export async function openDatabase(url: string): Promise<Storage> {
  try {
    return await openStorage(url);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot open the database ${redact(url)}: ${reason}`);
  }
}

export function stopOnSignals(stop: () => Promise<void>): void {
  const handler = (signal: string) => {
    process.stderr.write(`\nreceived ${signal}; finishing in-flight requests…\n`);
    stop().then(
      () => process.exit(0),
      (error) => {
        process.stderr.write(`shutdown failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => handler('SIGTERM'));
  process.once('SIGINT', () => handler('SIGINT'));
}

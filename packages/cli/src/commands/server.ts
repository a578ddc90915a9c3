/** Commands that run against the database directly: serve, init, and the operator's knobs. */
import { PLANS, type Plan } from '@warren/contract';
import type { Storage, serveConfig } from '@warren/server';
import type { Command } from 'commander';
import { COMMAND, consoleDir } from '../package.js';
import { UsageError, visible } from './output.js';

/**
 * The server's code (Fastify, the database drivers, the policy engine), loaded only by the
 * commands that need it, so that client commands start in tens of milliseconds.
 */
export const loadServer = () => import('@warren/server');

/** Reads flags or environment; what it refuses (a bad --db, --port, WARREN_PORT…) is a usage mistake. */
function asUsage<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

async function withStorage<T>(dbFlag: string | undefined, run: (storage: Storage) => Promise<T>): Promise<T> {
  const { databaseUrl, openDatabase } = await loadServer();
  const storage = await openDatabase(asUsage(() => databaseUrl(dbFlag)));
  try {
    return await run(storage);
  } finally {
    await storage.close();
  }
}

/**
 * A network's name is what people pick it by (`console login --network`, the console's sign-in
 * page) and the start of its DNS domain: something to type and to show, so short, without
 * blanks at either end, and without a character a terminal would act on (what `visible` escapes).
 */
function goodNetworkName(name: string): boolean {
  return name.length >= 1 && name.length <= 64 && name.trim() === name && visible(name) === name;
}

export function registerServerCommands(program: Command): void {
  program
    .command('serve')
    .description('serve the API (SQLite at ./data/warren.db unless --db says otherwise)')
    .option('--host <host>', 'address to listen on (env WARREN_HOST)', undefined)
    .option('--port <port>', 'port to listen on (env WARREN_PORT)', undefined)
    .option('--db <url>', 'sqlite:PATH, sqlite::memory: or postgres://… (env WARREN_DB)')
    .option(
      '--webhooks-allow-private',
      'let webhooks reach loopback and private addresses, and plain http (development and tests; env WARREN_WEBHOOKS_ALLOW_PRIVATE=true)',
    )
    .option('--derp', 'serve an embedded DERP relay at /derp, with STUN (env WARREN_DERP=1)')
    .option(
      '--derp-stun-port <port>',
      'UDP port of the relay\'s STUN responder, or "off" (env WARREN_DERP_STUN_PORT; default 3478)',
    )
    .action(async (flags: Parameters<typeof serveConfig>[0]) => {
      const server = await loadServer();
      const dir = consoleDir();
      const stop = await server.serve(
        asUsage(() => server.serveConfig(flags)),
        process.stdout,
        {
          command: COMMAND,
          ...(dir ? { consoleDir: dir } : {}),
        },
      );
      server.stopOnSignals(stop);
    });

  program
    .command('init')
    .description('create a network with its owner, default policy and first API key (printed once)')
    .option('--db <url>', 'database URL (env WARREN_DB)')
    .option('--network <name>', 'network name', 'default')
    .option('--owner <email>', 'login name of the owner', 'admin@example.com')
    .option('--plan <plan>', `plan: ${PLANS.join(' or ')}`, 'premium')
    .option('--json', 'print { "networkId", "apiKey" } and nothing else')
    .action(async (flags: { db?: string; network: string; owner: string; plan: string; json?: boolean }) => {
      if (!(PLANS as readonly string[]).includes(flags.plan)) {
        throw new UsageError(`--plan must be ${PLANS.join(' or ')} (got "${flags.plan}")`);
      }
      if (!goodNetworkName(flags.network)) {
        throw new UsageError(
          `--network must be 1 to 64 characters, without control characters or blanks at either end (got ${JSON.stringify(flags.network)})`,
        );
      }
      if (!/^[^\s@]+@[^\s@]+$/.test(flags.owner)) {
        throw new UsageError(`--owner must be an email address (got "${flags.owner}")`);
      }
      const { createNetwork, databaseUrl, redact } = await loadServer();
      const created = await withStorage(flags.db, (storage) =>
        createNetwork(storage.db, {
          name: flags.network,
          ownerEmail: flags.owner.toLowerCase(),
          plan: flags.plan as Plan,
          now: Date.now(),
        }),
      );
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ networkId: created.networkId, apiKey: created.apiKey })}\n`);
        return;
      }
      process.stdout.write(
        `Created network "${flags.network}" (${created.networkId}, plan ${flags.plan}) in ${redact(databaseUrl(flags.db))}.\n` +
          `Its first API key (scope "all", valid for 90 days) is shown only this once:\n\n  ${created.apiKey}\n\n`,
      );
    });

  const networks = program.command('networks').description('operator commands on the database');
  networks
    .command('set-plan <networkId> <plan>')
    .description(`change a network's plan (${PLANS.join(' or ')})`)
    .option('--db <url>', 'database URL (env WARREN_DB)')
    .action(async (networkId: string, plan: string, flags: { db?: string }) => {
      if (!(PLANS as readonly string[]).includes(plan)) {
        throw new UsageError(`plan must be ${PLANS.join(' or ')} (got "${plan}")`);
      }
      const { setPlan } = await loadServer();
      const found = await withStorage(flags.db, (storage) => setPlan(storage.db, networkId, plan as Plan));
      if (!found) throw new Error(`not_found: network ${networkId} does not exist`);
      process.stdout.write(`network ${networkId} is now on the ${plan} plan\n`);
    });
}

export { withStorage };

/** Commands that run against the database directly: serve, init, and the operator's knobs. */
import { PLANS, type Plan } from '@warren/contract';
import {
  createNetwork,
  databaseUrl,
  openStorage,
  redact,
  serve,
  serveConfig,
  setPlan,
  stopOnSignals,
} from '@warren/server';
import type { Command } from 'commander';

async function withStorage<T>(
  dbFlag: string | undefined,
  run: (storage: Awaited<ReturnType<typeof openStorage>>) => Promise<T>,
): Promise<T> {
  const storage = await openStorage(databaseUrl(dbFlag));
  try {
    return await run(storage);
  } finally {
    await storage.close();
  }
}

export function registerServerCommands(program: Command): void {
  program
    .command('serve')
    .description('serve the API (SQLite at ./data/warren.db unless --db says otherwise)')
    .option('--host <host>', 'address to listen on (env WARREN_HOST)', undefined)
    .option('--port <port>', 'port to listen on (env WARREN_PORT)', undefined)
    .option('--db <url>', 'sqlite:PATH, sqlite::memory: or postgres://… (env WARREN_DB)')
    .action(async (flags: { host?: string; port?: string; db?: string }) => {
      const stop = await serve(serveConfig(flags));
      stopOnSignals(stop);
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
      if (!(PLANS as readonly string[]).includes(flags.plan)) throw new Error(`--plan must be ${PLANS.join(' or ')}`);
      if (!/^[^\s@]+@[^\s@]+$/.test(flags.owner)) throw new Error('--owner must be an email address');
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
      if (!(PLANS as readonly string[]).includes(plan)) throw new Error(`plan must be ${PLANS.join(' or ')}`);
      const found = await withStorage(flags.db, (storage) => setPlan(storage.db, networkId, plan as Plan));
      if (!found) throw new Error(`network ${networkId} does not exist`);
      process.stdout.write(`network ${networkId} is now on the ${plan} plan\n`);
    });
}

export { withStorage };

/**
 * `warren console login --network N --user EMAIL`: an operator command on the server's
 * database that prints a one-time sign-in link (10 minutes, one use) for a network that does
 * not enforce single sign-on.
 */
import type { Command } from 'commander';
import { DEFAULT_URL, examples, type Io, printJson, serverAddress } from './output.js';
import { loadServer, withStorage } from './server.js';

export function registerConsoleCommands(program: Command, io: Io): void {
  const consoleCommand = program.command('console').description('the web console: sign-in links');
  consoleCommand
    .command('login')
    .description('print a one-time sign-in link for a person (refused where single sign-on is enforced)')
    .requiredOption('--network <name>', 'network name or id')
    .requiredOption('--user <email>', 'the login name of the person')
    .option('--url <url>', 'the address browsers reach Warren at (default WARREN_URL)')
    .option('--db <url>', 'database URL (env WARREN_DB)')
    .option('--json', 'print { "url", "expires" } as JSON')
    .addHelpText('after', examples(['warren console login --network default --user admin@example.com']))
    .action(async (flags: { network: string; user: string; url?: string; db?: string; json?: boolean }) => {
      const given = flags.url ?? io.env.WARREN_URL?.trim();
      const where = flags.url !== undefined ? '--url' : 'WARREN_URL';
      // A link nobody can open is worse than none: the address is checked before the link is made.
      const base = serverAddress(where, given || DEFAULT_URL).replace(/\/+$/, '');
      const { consoleLoginLink } = await loadServer();
      const link = await withStorage(flags.db, (storage) =>
        consoleLoginLink(storage.db, { network: flags.network, loginName: flags.user, now: Date.now() }),
      );
      const url = `${base}/auth/link?token=${link.token}`;
      const expires = new Date(link.expiresAt).toISOString();
      if (flags.json) return printJson(io, { url, expires });
      io.out(`Open this link within 10 minutes (it works once, until ${expires}):\n\n  ${url}\n\n`);
    });
}

/** `warren whoami`: the caller as the API sees it (`GET /v1/me`): which key, network and scopes. */
import type { MeBody } from '@warren/contract';
import type { Command } from 'commander';
import { connect, examples, type Io, printFields, printJson, until } from './output.js';

function caller(me: MeBody): string {
  if (me.key) return `API key ${me.key.name} (${me.key.id})`;
  if (me.user) return `${me.user.loginName} (${me.user.id}), role ${me.user.role}`;
  return me.type;
}

export function registerWhoamiCommand(program: Command, io: Io): void {
  program
    .command('whoami')
    .description('show the caller: the API key in WARREN_API_KEY, its network, scopes and expiry')
    .option('--json', 'print the API response as JSON')
    .addHelpText('after', examples(['warren whoami', 'warren whoami --json']))
    .action(async (flags: { json?: boolean }) => {
      const me = await connect(io).network.me();
      if (flags.json) return printJson(io, me);
      printFields(io, [
        ['caller', caller(me)],
        ['network', `${me.network.name} (${me.network.id})`],
        ['scopes', me.scopes.join(', ') || '-'],
        ...(me.ownDevicesOnly ? ([['devices', 'only its own']] as [string, string][]) : []),
        ['expires', `${me.expires} (${until(me.expires)})`],
      ]);
    });
}

/** `warren network`: the network of the API key, its plan, limits and usage. */
import type { Command } from 'commander';
import { connect, examples, type Io, printFields, printJson } from './output.js';

const of = (used: number, limit: number | null) => `${used} of ${limit ?? 'unlimited'}`;

export function registerNetworkCommands(program: Command, io: Io): void {
  program
    .command('network')
    .description("show the API key's network: plan, limits and usage")
    .option('--json', 'print the API response as JSON')
    .addHelpText('after', examples(['warren network', 'warren network --json']))
    .action(async (flags: { json?: boolean }) => {
      const network = await connect(io).network.get();
      if (flags.json) return printJson(io, network);
      printFields(io, [
        ['network', `${network.name} (${network.id})`],
        ['plan', network.plan],
        ['users', of(network.usage.users, network.limits.users)],
        ['devices', of(network.usage.devices, network.limits.devices)],
        ['log retention', `${network.limits.logRetentionDays} days`],
      ]);
    });
}

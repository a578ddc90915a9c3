/** `warren network [set]`: the network of the API key, its plan, limits, usage and settings. */
import type { NetworkBody } from '@warren/client';
import type { Command } from 'commander';
import { collectRoute, type NetworkSetFlags, networkPatch, OPPOSITES, refuseOpposites } from './network-settings.js';
import { collect, connect, examples, type Io, printFields, printJson } from './output.js';

const of = (used: number, limit: number | null) => `${used} of ${limit ?? 'unlimited'}`;
const onOff = (value: boolean) => (value ? 'on' : 'off');
const list = (values: readonly string[]) => values.join(' ') || '-';

/** One line per entry, the label on the first only; `-` when there is none. */
function rows(label: string, lines: readonly string[]): [string, string][] {
  if (lines.length === 0) return [[label, '-']];
  return lines.map((line, i) => [i === 0 ? label : '', line]);
}

function printNetwork(io: Io, network: NetworkBody): void {
  const { dns, derp } = network;
  printFields(io, [
    ['network', `${network.name} (${network.id})`],
    ['plan', network.plan],
    ['users', of(network.usage.users, network.limits.users)],
    ['devices', of(network.usage.devices, network.limits.devices)],
    ['log retention', `${network.limits.logRetentionDays} days`],
    ['device approval', onOff(network.deviceApproval)],
    ['node key expiry', network.nodeKeyExpiry === '0' ? 'never' : network.nodeKeyExpiry],
    ['flow logs', onOff(network.flowLogs)],
    ['DNS domain', dns.domain],
    ['MagicDNS', onOff(dns.magicDns)],
    ['nameservers', list(dns.nameservers)],
    ['search domains', list(dns.searchDomains)],
    ...rows(
      'split DNS',
      Object.entries(dns.splitDns).map(
        ([domain, resolvers]) => `${domain} → ${resolvers.join(' ') || '(answered by the clients, none forwarded)'}`,
      ),
    ),
    ...rows(
      'extra records',
      dns.extraRecords.map((r) => `${r.name} ${r.type} ${r.value}`),
    ),
    ['embedded relay', onOff(derp.embedded)],
    ['DERP regions', String(derp.regions.length)],
  ]);
}

export function registerNetworkCommands(program: Command, io: Io): void {
  const network = program
    .command('network')
    .description("show the API key's network: plan, limits, usage and settings; change the settings with set")
    .option('--json', 'print the API response as JSON')
    .addHelpText(
      'after',
      examples([
        'warren network',
        'warren network --json',
        'warren network set --device-approval --node-key-expiry 90d',
      ]),
    )
    .action(async (flags: { json?: boolean }) => {
      const found = await connect(io).network.get();
      if (flags.json) return printJson(io, found);
      printNetwork(io, found);
    });

  const given = new Set<string>();
  const set = network
    .command('set')
    .description("change the network's settings: only those given, in one request; prints the result")
    .option('--device-approval', 'new devices wait for approval (warren devices approve)')
    .option('--no-device-approval', 'new devices join at once')
    .option('--node-key-expiry <duration>', 'how long a login lasts: 1s … 365d, or 0 for never')
    .option('--flow-logs', 'Tailscale clients log their flows into the connection log')
    .option('--no-flow-logs', 'Tailscale clients log no flows')
    .option('--dns-domain <name>', 'the MagicDNS domain: devices are <name>.<domain>')
    .option('--dns-domain-default', 'back to the default domain, <network name>.warren.internal')
    .option('--magic-dns', "Tailscale clients answer their peers' names themselves")
    .option('--no-magic-dns', 'Tailscale clients do not answer peer names')
    .option('--nameserver <ip>', 'a resolver for every other name (repeatable; replaces the list)', collect)
    .option('--no-nameservers', 'clear the nameservers')
    .option('--search-domain <domain>', 'a search domain (repeatable; replaces the list)', collect)
    .option('--no-search-domains', 'clear the search domains')
    .option(
      '--split-dns <route>',
      'DOMAIN=IP[,IP…]: resolvers for names under DOMAIN; DOMAIN= forwards none (repeatable; replaces every route)',
      collectRoute,
    )
    .option('--no-split-dns', 'remove every split DNS route')
    .option(
      '--extra-record <record>',
      'NAME=ADDRESS: a record the clients answer, A for IPv4, AAAA for IPv6 (repeatable; replaces the list)',
      collect,
    )
    .option('--no-extra-records', 'remove every extra record')
    .option('--derp-embedded', 'put the embedded relay (warren serve --derp) in the DERP map')
    .option('--no-derp-embedded', 'leave the embedded relay out of the DERP map')
    .option('--derp-regions <file>', 'a JSON file holding the DERP regions array ([] for none; - reads stdin)')
    .option('--json', 'print the API response as JSON')
    .addHelpText(
      'after',
      examples([
        'warren network set --device-approval --node-key-expiry 90d',
        'warren network set --no-device-approval --node-key-expiry 0',
        'warren network set --dns-domain corp.example --nameserver 1.1.1.1 --nameserver 9.9.9.9',
        'warren network set --split-dns corp.example=10.0.0.53,10.0.0.54 --split-dns lab.example=',
        'warren network set --extra-record db.lab.example=10.0.0.5 --extra-record db.lab.example=fd00::5',
        'warren network set --no-search-domains --no-split-dns --no-extra-records',
        'warren network set --no-derp-embedded --derp-regions regions.json',
      ]),
    )
    // `network set --json` is parsed as the `network --json` of the parent: read both.
    .action(async (_flags: NetworkSetFlags, command: Command) => {
      const flags: NetworkSetFlags = command.optsWithGlobals();
      refuseOpposites(given);
      const patch = await networkPatch(flags);
      const updated = await connect(io).network.update(patch);
      if (flags.json) return printJson(io, updated);
      printNetwork(io, updated);
    });
  for (const name of OPPOSITES.flat()) set.on(`option:${name}`, () => given.add(name));
}

/** `warren routes list|approve|disable`: subnet routes that devices advertise. */

import type { RouteBody } from '@warren/client';
import { ROUTE_STATES } from '@warren/contract';
import type { Command } from 'commander';
import { resolveDevice } from './devices.js';
import { connect, examples, type Io, oneOf, printJson, printTable, visible } from './output.js';

function notes(route: RouteBody): string {
  const list = [
    ...(route.exitNode ? ['exit node'] : []),
    ...(route.primary ? ['primary'] : []),
    ...(route.autoApproved ? ['auto-approved'] : []),
    ...(route.advertised ? [] : ['not advertised']),
  ];
  return list.join(', ') || '-';
}

function printRoute(io: Io, route: RouteBody, json: boolean | undefined): void {
  if (json) printJson(io, route);
  else io.out(`${route.id} ${route.prefix} via ${visible(route.deviceName)}: ${route.state}\n`);
}

export function registerRouteCommands(program: Command, io: Io): void {
  const routes = program
    .command('routes')
    .description('list, approve and disable subnet routes')
    .addHelpText('after', examples(['warren routes list --state pending', 'warren routes approve rt_9x2c1']));

  routes
    .command('list')
    .description('list the routes devices advertise')
    .option('--state <state>', `one of ${ROUTE_STATES.join(', ')}`)
    .option('--device <device>', 'only the routes of this device (id or unique name)')
    .option('--json', 'print the API response as JSON')
    .addHelpText('after', examples(['warren routes list', 'warren routes list --state pending --device gw-1']))
    .action(async (flags: { state?: string; device?: string; json?: boolean }) => {
      const state = flags.state === undefined ? undefined : oneOf('--state', flags.state, ROUTE_STATES);
      const warren = connect(io);
      const device = flags.device === undefined ? undefined : await resolveDevice(warren, flags.device);
      const list = await warren.routes.list({ state, device });
      if (flags.json) return printJson(io, { routes: list });
      printTable(
        io,
        ['id', 'prefix', 'device', 'state', 'notes'],
        list.map((r) => [r.id, r.prefix, `${r.deviceName} (${r.deviceId})`, r.state, notes(r)]),
        'no routes match',
      );
    });

  routes
    .command('approve <id>')
    .description('approve a pending or disabled route so it reaches peers')
    .option('--json', 'print the API response as JSON')
    .addHelpText('after', examples(['warren routes approve rt_9x2c1']))
    .action(async (id: string, flags: { json?: boolean }) => {
      printRoute(io, await connect(io).routes.approve(id), flags.json);
    });

  routes
    .command('disable <id>')
    .description('disable an approved route: it leaves every peer’s map')
    .option('--json', 'print the API response as JSON')
    .addHelpText('after', examples(['warren routes disable rt_9x2c1']))
    .action(async (id: string, flags: { json?: boolean }) => {
      printRoute(io, await connect(io).routes.disable(id), flags.json);
    });
}

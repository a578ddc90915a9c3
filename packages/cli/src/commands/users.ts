/** `warren users list|add|set-role|suspend|restore|remove`. */

import type { UserBody, Warren } from '@warren/client';
import { ROLES, type Role } from '@warren/contract';
import type { Command } from 'commander';
import { ago, connect, examples, type Io, oneOf, printJson, printTable, visible } from './output.js';

/** A user id (`usr_…`) or a login name. */
async function resolveUser(warren: Warren, ref: string): Promise<string> {
  if (ref.startsWith('usr_')) return ref;
  const login = ref.toLowerCase();
  const user = (await warren.users.list()).find((u) => u.loginName === login);
  if (!user) throw new Error(`not_found: no user has the login name "${ref}"`);
  return user.id;
}

function checkRole(role: string): Role {
  return oneOf('role', role, ROLES);
}

function printUser(io: Io, user: UserBody, verb: string): void {
  io.out(`${verb} ${visible(user.loginName)} (${user.id}), role ${user.role}\n`);
}

export function registerUserCommands(program: Command, io: Io): void {
  const users = program
    .command('users')
    .description('list, add and remove users and change their roles')
    .addHelpText('after', examples(['warren users add ana@example.com --role admin', 'warren users list']));

  users
    .command('list')
    .description('list the users of the network')
    .option('--role <role>', `only users with this role (${ROLES.join(', ')})`)
    .option('--json', 'print the API response as JSON')
    .addHelpText('after', examples(['warren users list', 'warren users list --role admin --json']))
    .action(async (flags: { role?: string; json?: boolean }) => {
      const role = flags.role === undefined ? undefined : checkRole(flags.role);
      const list = await connect(io).users.list({ role });
      if (flags.json) return printJson(io, { users: list });
      printTable(
        io,
        ['id', 'login name', 'display name', 'role', 'devices', 'last seen'],
        list.map((u) => [u.id, u.loginName, u.displayName, u.role, String(u.deviceCount), ago(u.lastSeen)]),
        'no users match',
      );
    });

  users
    .command('add <loginName>')
    .description('add a user (403 plan_limit past the plan’s seats)')
    .option('--name <displayName>', 'display name (default: the part before @)')
    .option('--role <role>', `one of ${ROLES.join(', ')}`, 'member')
    .option('--json', 'print the API response as JSON')
    .addHelpText('after', examples(['warren users add bo@example.com --name Bo --role network-admin']))
    .action(async (loginName: string, flags: { name?: string; role: string; json?: boolean }) => {
      const role = checkRole(flags.role);
      const user = await connect(io).users.create({ loginName, displayName: flags.name, role });
      if (flags.json) printJson(io, user);
      else printUser(io, user, 'added');
    });

  users
    .command('set-role <user> <role>')
    .description("change a user's role (user id or login name)")
    .option('--json', 'print the API response as JSON')
    .addHelpText('after', examples(['warren users set-role bo@example.com admin']))
    .action(async (ref: string, roleText: string, flags: { json?: boolean }) => {
      const role = checkRole(roleText);
      const warren = connect(io);
      const user = await warren.users.update(await resolveUser(warren, ref), { role });
      if (flags.json) printJson(io, user);
      else printUser(io, user, 'updated');
    });

  for (const [verb, status, what] of [
    ['suspend', 'suspended', 'end their sessions and disconnect their devices; nothing is deleted'],
    ['restore', 'active', 'let a suspended user and their devices back in'],
  ] as const) {
    users
      .command(`${verb} <user>`)
      .description(`${verb} a user: ${what}`)
      .option('--json', 'print the API response as JSON')
      .addHelpText('after', examples([`warren users ${verb} bo@example.com`]))
      .action(async (ref: string, flags: { json?: boolean }) => {
        const warren = connect(io);
        const user = await warren.users.update(await resolveUser(warren, ref), { status });
        if (flags.json) printJson(io, user);
        else printUser(io, user, verb === 'suspend' ? 'suspended' : 'restored');
      });
  }

  users
    .command('remove <user>')
    .description('remove a user and their devices (API and auth keys stay)')
    .addHelpText('after', examples(['warren users remove bo@example.com']))
    .action(async (ref: string) => {
      const warren = connect(io);
      const id = await resolveUser(warren, ref);
      await warren.users.delete(id);
      io.out(`removed user ${ref === id ? id : `${ref} (${id})`} and their devices\n`);
    });
}

/** `warren devices list|get|delete|tag|approve|set|expire`. */
import type { DeviceBody, Warren } from '@warren/client';
import type { Command } from 'commander';
import {
  ago,
  collect,
  connect,
  examples,
  type Io,
  printFields,
  printJson,
  printTable,
  UsageError,
  until,
  visible,
} from './output.js';

/** A device id (`dev_…`), or a device's name or hostname when it names exactly one device. */
export async function resolveDevice(warren: Warren, ref: string): Promise<string> {
  if (ref.startsWith('dev_')) return ref;
  const matches = (await warren.devices.list()).filter((d) => d.name === ref || d.hostname === ref);
  if (matches.length === 1) return matches[0]!.id;
  // Nothing by that name is the network's answer, like a 404 (exit 1); several is a usage mistake.
  if (matches.length === 0) throw new Error(`not_found: no device is named "${ref}" (pass its id, dev_…)`);
  throw new UsageError(
    `${matches.length} devices are named "${ref}": pass the id (${matches.map((d) => d.id).join(', ')})`,
  );
}

/** Tags when the device has any (a tagged device is identified by its tags), else its user. */
export function owner(device: DeviceBody): string {
  return device.tags.length > 0 ? device.tags.join(',') : (device.user?.loginName ?? '-');
}

function printDevice(io: Io, d: DeviceBody): void {
  printFields(io, [
    ['id', d.id],
    ['name', d.name],
    ['hostname', d.hostname],
    ['os', d.os],
    ['user', d.user ? `${d.user.loginName} (${d.user.id})` : '-'],
    ['tags', d.tags.join(' ') || '-'],
    ['addresses', d.addresses?.join(' ') || '-'],
    ['status', d.online ? 'online' : `offline, last seen ${ago(d.lastSeen)}`],
    ['routes', d.routes?.map((r) => `${r.prefix} (${r.state}${r.primary ? ', primary' : ''})`).join(' ') || '-'],
    ['client', d.clientVersion ?? '-'],
    ['ephemeral', d.ephemeral ? 'yes' : 'no'],
    ['enrolled', `${d.created}${d.keyId ? ` with ${d.keyId}` : ''}`],
    ['approved', d.authorized ? 'yes' : 'no, waiting for approval (warren devices approve)'],
    [
      'login expires',
      d.keyExpired ? 'expired: must log in again' : d.keyExpiry ? `${d.keyExpiry} (${until(d.keyExpiry)})` : 'never',
    ],
  ]);
}

export function registerDeviceCommands(program: Command, io: Io): void {
  const devices = program
    .command('devices')
    .description('list, inspect, tag, approve, expire, change and delete devices')
    .addHelpText(
      'after',
      examples(['warren devices list --tag tag:ci --online', 'warren devices tag dev_7f3k2 tag:server']),
    );

  devices
    .command('list')
    .description('list devices; filters combine with AND')
    .option('--tag <tag>', 'only devices with this tag (repeat: all must match)', collect)
    .option('--online', 'only online devices')
    .option('--offline', 'only offline devices')
    .option('--user <user>', 'only devices of this user (id or login name)')
    .option('--fields <fields>', 'with --json: default or all (adds addresses, routes, …)')
    .option('--json', 'print the API response as JSON')
    .addHelpText(
      'after',
      examples([
        'warren devices list',
        'warren devices list --tag tag:ci --tag tag:linux --online',
        'warren devices list --user ana@example.com --json',
      ]),
    )
    .action(
      async (flags: {
        tag?: string[];
        online?: boolean;
        offline?: boolean;
        user?: string;
        fields?: string;
        json?: boolean;
      }) => {
        if (flags.online && flags.offline) throw new UsageError('pass --online or --offline, not both');
        if (flags.fields !== undefined && flags.fields !== 'default' && flags.fields !== 'all') {
          throw new UsageError('--fields must be default or all');
        }
        const warren = connect(io);
        const online = flags.online ? true : flags.offline ? false : undefined;
        // People see addresses, so the table asks for the detail fields.
        const fields = flags.json ? (flags.fields as 'default' | 'all' | undefined) : 'all';
        const list = await warren.devices.list({ tag: flags.tag, online, user: flags.user, fields });
        if (flags.json) return printJson(io, { devices: list });
        printTable(
          io,
          ['id', 'name', 'address', 'owner', 'os', 'status', 'last seen'],
          list.map((d) => [
            d.id,
            d.name,
            d.addresses?.[0] ?? '-',
            owner(d),
            d.os,
            d.online ? 'online' : 'offline',
            ago(d.lastSeen),
          ]),
          'no devices match',
        );
      },
    );

  devices
    .command('get <device>')
    .description('show one device (id, or a unique name)')
    .option('--json', 'print the API response as JSON')
    .addHelpText('after', examples(['warren devices get dev_7f3k2', 'warren devices get web-1 --json']))
    .action(async (ref: string, flags: { json?: boolean }) => {
      const warren = connect(io);
      const device = await warren.devices.get(await resolveDevice(warren, ref));
      if (flags.json) printJson(io, device);
      else printDevice(io, device);
    });

  devices
    .command('delete <device>')
    .description('delete a device: its credential stops working and its addresses are freed at once')
    .addHelpText('after', examples(['warren devices delete dev_7f3k2']))
    .action(async (ref: string) => {
      const warren = connect(io);
      const id = await resolveDevice(warren, ref);
      await warren.devices.delete(id);
      io.out(`deleted device ${id}\n`);
    });

  devices
    .command('tag <device> [tags...]')
    .description("replace a device's tags (no tags clears them); each tag must be owned in the policy's tagOwners")
    .option('--json', 'print the API response as JSON')
    .addHelpText(
      'after',
      examples(['warren devices tag dev_7f3k2 tag:server tag:prod', 'warren devices tag dev_7f3k2']),
    )
    .action(async (ref: string, tags: string[], flags: { json?: boolean }) => {
      const warren = connect(io);
      const device = await warren.devices.setTags(await resolveDevice(warren, ref), tags);
      if (flags.json) printJson(io, device);
      else io.out(`${device.id} (${visible(device.name)}) tags: ${visible(device.tags.join(' ')) || '(none)'}\n`);
    });

  devices
    .command('approve <device>')
    .description('approve a device waiting for approval: it gets its peers and they see it')
    .option('--json', 'print the API response as JSON')
    .addHelpText('after', examples(['warren devices approve dev_7f3k2', 'warren devices approve laptop-ana']))
    .action(async (ref: string, flags: { json?: boolean }) => {
      const warren = connect(io);
      const device = await warren.devices.approve(await resolveDevice(warren, ref));
      if (flags.json) printJson(io, device);
      else io.out(`approved device ${device.id} (${visible(device.name)})\n`);
    });

  // Both --key-expiry and --no-key-expiry given is a mistake, not a race the last one wins.
  const given = new Set<string>();
  const set = devices
    .command('set <device>')
    .description("change a device's settings; prints the device as devices get does")
    .option('--key-expiry', "its login expires as the network's node key expiry says (the default)")
    .option('--no-key-expiry', 'its login never expires; also lifts an expiry that already happened')
    .option('--json', 'print the API response as JSON')
    .addHelpText(
      'after',
      examples(['warren devices set gw-1 --no-key-expiry', 'warren devices set dev_7f3k2 --key-expiry']),
    )
    .action(async (ref: string, flags: { keyExpiry?: boolean; json?: boolean }) => {
      if (given.size > 1) throw new UsageError('pass --key-expiry or --no-key-expiry, not both');
      if (flags.keyExpiry === undefined)
        throw new UsageError('nothing to change: pass --key-expiry or --no-key-expiry');
      const warren = connect(io);
      const device = await warren.devices.update(await resolveDevice(warren, ref), {
        keyExpiryDisabled: !flags.keyExpiry,
      });
      if (flags.json) printJson(io, device);
      else printDevice(io, device);
    });
  for (const name of ['key-expiry', 'no-key-expiry']) set.on(`option:${name}`, () => given.add(name));

  devices
    .command('expire <device>')
    .description("end a device's login now: it leaves every netmap until it logs in again")
    .option('--json', 'print the API response as JSON')
    .addHelpText('after', examples(['warren devices expire dev_7f3k2']))
    .action(async (ref: string, flags: { json?: boolean }) => {
      const warren = connect(io);
      const device = await warren.devices.expire(await resolveDevice(warren, ref));
      if (flags.json) printJson(io, device);
      else io.out(`expired the login of device ${device.id} (${visible(device.name)})\n`);
    });
}

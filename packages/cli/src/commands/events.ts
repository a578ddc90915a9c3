/**
 * `warren events`: every change of state, oldest first, from `--since` on, or tailed with
 * `--follow`; `--type` (repeatable) keeps a type or a family (`device.*`).
 */

import type { EventBody } from '@warren/client';
import type { Command } from 'commander';
import { addCommon, type CommonFlags, compactTime, runTail, tailFlags } from './logs.js';
import { collect, connect, examples, type Io } from './output.js';

/** What an event is about: the id of the record it carries, or the policy's version. */
function subject(event: EventBody): string {
  const data = event.data as Record<string, { id?: string } | undefined> & { version?: number };
  if (data.version !== undefined) return `version ${data.version}`;
  const record = Object.values(data).find((value) => typeof value === 'object' && value?.id);
  return (record as { id: string } | undefined)?.id ?? '-';
}

function actor(event: EventBody): string {
  const { type, id, name } = event.actor;
  if (name && id) return `${name} (${id})`;
  return name ?? id ?? type;
}

export function registerEventCommands(program: Command, io: Io): void {
  addCommon(
    program
      .command('events')
      .description('changes of state (devices, routes, policy, keys, users), oldest first')
      .option('--type <type>', 'only this type or family, e.g. device.created or device.* (repeatable)', collect),
  )
    .addHelpText(
      'after',
      examples([
        'warren events --since 24h',
        "warren events --follow --type 'device.*'",
        'warren events --type key.expiring --json',
      ]),
    )
    .action(async (flags: CommonFlags & { type?: string[] }) => {
      tailFlags(flags);
      const warren = connect(io);
      await runTail<EventBody>(
        io,
        flags,
        ['time', 'type', 'subject', 'by'],
        (query, signal) => warren.events.list({ ...query, type: flags.type }, { signal }),
        (e) => [compactTime(e.time), e.type, subject(e), actor(e)],
        `no events in the last ${flags.since ?? '1h'}`,
      );
    });
}

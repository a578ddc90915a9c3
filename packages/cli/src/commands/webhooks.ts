/** `warren webhooks create|list|get|update|delete|rotate|test|deliveries|retry`. */

import type { WebhookBody } from '@warren/client';
import { DELIVERY_STATES } from '@warren/contract';
import type { Command } from 'commander';
import { addCommon, type CommonFlags, compactTime, runTail, tailFlags } from './logs.js';
import {
  ago,
  collect,
  connect,
  examples,
  type Io,
  oneOf,
  printFields,
  printJson,
  printTable,
  UsageError,
  visible,
} from './output.js';

function printWebhook(io: Io, webhook: WebhookBody): void {
  printFields(io, [
    ['id', webhook.id],
    ['url', webhook.url],
    ['events', webhook.events.join(', ')],
    ['description', webhook.description || '-'],
    ['enabled', webhook.enabled ? 'yes' : `no${webhook.disabledReason ? ` (${webhook.disabledReason})` : ''}`],
    ['created', webhook.created],
    ['last delivery', ago(webhook.lastDelivery)],
  ]);
}

function checkId(id: string, prefix: string, what: string): string {
  if (!id.startsWith(prefix)) throw new UsageError(`${what} ids look like ${prefix}… (got "${id}")`);
  return id;
}

const SECRET_NOTE = 'store this secret now: it is not shown again; verify deliveries with it (Standard Webhooks)\n';

export function registerWebhookCommands(program: Command, io: Io): void {
  const webhooks = program
    .command('webhooks')
    .description('endpoints that receive events, signed by the Standard Webhooks scheme')
    .addHelpText(
      'after',
      examples([
        "warren webhooks create https://hooks.example.com/warren --event 'device.*' --event policy.updated",
        'warren webhooks deliveries whk_3k9x --follow',
      ]),
    );

  webhooks
    .command('list')
    .description('list the webhook endpoints')
    .option('--json', 'print the API response as JSON')
    .action(async (flags: { json?: boolean }) => {
      const list = await connect(io).webhooks.list();
      if (flags.json) return printJson(io, { webhooks: list });
      printTable(
        io,
        ['id', 'url', 'events', 'enabled', 'last delivery'],
        list.map((w) => [w.id, w.url, w.events.join(','), w.enabled ? 'yes' : 'no', ago(w.lastDelivery)]),
        'no webhooks',
      );
    });

  webhooks
    .command('create <url>')
    .description('add an endpoint; prints its signing secret once')
    .option('--event <type>', 'a type, a family (device.*) or * (repeatable; default *)', collect)
    .option('--description <text>', 'what the endpoint is for')
    .option('--json', 'print the API response as JSON')
    .action(async (url: string, flags: { event?: string[]; description?: string; json?: boolean }) => {
      const webhook = await connect(io).webhooks.create({
        url,
        events: flags.event ?? ['*'],
        description: flags.description,
      });
      if (flags.json) return printJson(io, webhook);
      printWebhook(io, webhook);
      io.out(`secret         ${webhook.secret}\n`);
      io.err(SECRET_NOTE);
    });

  webhooks
    .command('get <id>')
    .description('show an endpoint')
    .option('--json', 'print the API response as JSON')
    .action(async (id: string, flags: { json?: boolean }) => {
      const webhook = await connect(io).webhooks.get(checkId(id, 'whk_', 'webhook'));
      if (flags.json) printJson(io, webhook);
      else printWebhook(io, webhook);
    });

  webhooks
    .command('update <id>')
    .description('change the URL, events or description, or enable or disable the endpoint')
    .option('--url <url>', 'the new target')
    .option('--event <type>', 'replace the events (repeatable)', collect)
    .option('--description <text>', 'the new description')
    .option('--enable', 'deliver again (clears the reason it was disabled)')
    .option('--disable', 'stop delivering')
    .option('--json', 'print the API response as JSON')
    .action(
      async (
        id: string,
        flags: {
          url?: string;
          event?: string[];
          description?: string;
          enable?: boolean;
          disable?: boolean;
          json?: boolean;
        },
      ) => {
        if (flags.enable && flags.disable) throw new UsageError('--enable and --disable cannot go together');
        const enabled = flags.enable ? true : flags.disable ? false : undefined;
        const webhook = await connect(io).webhooks.update(checkId(id, 'whk_', 'webhook'), {
          url: flags.url,
          events: flags.event,
          description: flags.description,
          enabled,
        });
        if (flags.json) printJson(io, webhook);
        else printWebhook(io, webhook);
      },
    );

  webhooks
    .command('delete <id>')
    .description('remove an endpoint and its deliveries')
    .action(async (id: string) => {
      await connect(io).webhooks.delete(checkId(id, 'whk_', 'webhook'));
      io.out(`deleted webhook ${id}\n`);
    });

  webhooks
    .command('rotate <id>')
    .description('a new signing secret; the old one keeps signing beside it for 24 hours')
    .option('--json', 'print the API response as JSON')
    .action(async (id: string, flags: { json?: boolean }) => {
      const { secret } = await connect(io).webhooks.rotate(checkId(id, 'whk_', 'webhook'));
      if (flags.json) return printJson(io, { secret });
      io.out(`${secret}\n`);
      io.err(SECRET_NOTE);
    });

  webhooks
    .command('test <id>')
    .description('send a webhook.test event to this endpoint')
    .action(async (id: string) => {
      await connect(io).webhooks.test(checkId(id, 'whk_', 'webhook'));
      io.out(`sent a webhook.test event to ${id}; see warren webhooks deliveries ${id}\n`);
    });

  addCommon(
    webhooks
      .command('deliveries <id>')
      .description('deliveries of an endpoint, oldest first')
      .option('--state <state>', DELIVERY_STATES.join(', ')),
    { since: false },
  ).action(async (id: string, flags: CommonFlags & { state?: string }) => {
    tailFlags(flags);
    const state = flags.state === undefined ? undefined : oneOf('--state', flags.state, DELIVERY_STATES);
    const webhookId = checkId(id, 'whk_', 'webhook');
    const warren = connect(io);
    await runTail(
      io,
      flags,
      ['created', 'id', 'event', 'type', 'state', 'attempts', 'last status', 'last error'],
      ({ cursor, limit }, signal) => warren.webhooks.deliveries(webhookId, { cursor, limit, state }, { signal }),
      (d) => [
        compactTime(d.created),
        d.id,
        d.eventId,
        d.type,
        d.state,
        String(d.attempts),
        d.lastStatus === null ? '-' : String(d.lastStatus),
        visible(d.lastError ?? '-'),
      ],
      'no deliveries',
    );
  });

  webhooks
    .command('retry <id> <deliveryId>')
    .description('deliver again now')
    .action(async (id: string, deliveryId: string) => {
      await connect(io).webhooks.retry(checkId(id, 'whk_', 'webhook'), checkId(deliveryId, 'dlv_', 'delivery'));
      io.out(`delivery ${deliveryId} will be attempted again now\n`);
    });
}

/** `warren keys list|create|get|delete|set-limit`: auth keys (enrollment) and API keys (management). */

import type { CreatedKey, CreateKeyInput, KeyBody } from '@warren/client';
import { KEY_STATES, SCOPES, type Scope } from '@warren/contract';
import type { Command } from 'commander';
import {
  ago,
  checkDuration,
  collect,
  connect,
  examples,
  type Io,
  oneOf,
  positiveInteger,
  printFields,
  printJson,
  printTable,
  UsageError,
  until,
  visible,
} from './output.js';
import { loadServer, withStorage } from './server.js';

/** What sets an auth key apart: its flags and tags; an API key: its scopes. */
function traits(key: KeyBody): string {
  if (key.type === 'api') return `scopes ${key.scopes.join(',')}`;
  const flags = [
    key.reusable ? 'reusable' : 'single-use',
    ...(key.ephemeral ? ['ephemeral'] : []),
    ...(key.preApproved ? ['pre-approved'] : []),
    ...(key.tags ?? []),
  ];
  return flags.join(' ');
}

function printKey(io: Io, key: KeyBody): void {
  printFields(io, [
    ['id', key.id],
    ['type', key.type],
    ...(key.type === 'api' ? ([['name', key.name ?? '-']] as [string, string][]) : []),
    ['description', key.description || '-'],
    [key.type === 'api' ? 'scopes' : 'flags', traits(key)],
    ...(key.type === 'auth' ? ([['user', key.user ?? '-']] as [string, string][]) : []),
    ...(key.rateLimit ? ([['rate limit', `${key.rateLimit}/min`]] as [string, string][]) : []),
    ['state', key.state],
    ['created', `${key.created}${key.createdBy ? ` by ${key.createdBy}` : ''}`],
    ['expires', `${key.expires} (${until(key.expires)})`],
    ['uses', String(key.uses)],
    ['last used', key.lastUsed ? `${key.lastUsed} (${ago(key.lastUsed)})` : 'never'],
  ]);
}

interface CreateFlags {
  api?: boolean;
  name?: string;
  scope?: string[];
  rateLimit?: string;
  reusable?: boolean;
  ephemeral?: boolean;
  preApproved?: boolean;
  tag?: string[];
  user?: string;
  description?: string;
  expires?: string;
  json?: boolean;
  quiet?: boolean;
}

function createInput(flags: CreateFlags): CreateKeyInput {
  checkDuration('--expires', flags.expires);
  if (flags.api) {
    const misplaced = [
      flags.reusable && '--reusable',
      flags.ephemeral && '--ephemeral',
      flags.preApproved && '--pre-approved',
      flags.tag && '--tag',
      flags.user && '--user',
    ].filter(Boolean);
    if (misplaced.length > 0) throw new UsageError(`${misplaced.join(', ')}: only for auth keys (drop --api)`);
    if (!flags.name) throw new UsageError('an API key needs --name');
    if (!flags.scope?.length)
      throw new UsageError(`an API key needs --scope (repeat for several: ${SCOPES.join(', ')})`);
    const bad = flags.scope.find((s) => !(SCOPES as readonly string[]).includes(s));
    if (bad) throw new UsageError(`"${bad}" is not a scope: use ${SCOPES.join(', ')}`);
    let rateLimit: number | undefined;
    if (flags.rateLimit !== undefined) rateLimit = positiveInteger('--rate-limit', flags.rateLimit);
    return {
      type: 'api',
      name: flags.name,
      scopes: flags.scope as Scope[],
      expiresIn: flags.expires,
      rateLimit,
      description: flags.description,
    };
  }
  const misplaced = [flags.name && '--name', flags.scope && '--scope', flags.rateLimit && '--rate-limit'].filter(
    Boolean,
  );
  if (misplaced.length > 0) throw new UsageError(`${misplaced.join(', ')}: only for API keys (add --api)`);
  return {
    type: 'auth',
    reusable: flags.reusable,
    ephemeral: flags.ephemeral,
    preApproved: flags.preApproved,
    tags: flags.tag,
    user: flags.user,
    description: flags.description,
    expiresIn: flags.expires,
  };
}

function announce(io: Io, key: CreatedKey): void {
  const what =
    key.type === 'api'
      ? `API key "${visible(key.name ?? '')}" ${key.id} (scopes ${key.scopes.join(',')}`
      : `auth key ${key.id} (${traits(key)}`;
  io.out(
    `Created ${what}, expires ${key.expires}).\n` +
      'The secret is shown only this once; store it now:\n\n' +
      `  ${key.key}\n\n`,
  );
}

export function registerKeyCommands(program: Command, io: Io): void {
  const keys = program
    .command('keys')
    .description('auth keys (to enroll devices) and API keys (to call this API)')
    .addHelpText(
      'after',
      examples([
        'warren keys create --reusable --tag tag:ci --expires 24h',
        'warren keys create --api --name deploy-bot --scope devices --expires 30d',
        'warren keys list --type api',
      ]),
    );

  keys
    .command('list')
    .description('list keys (secrets are never shown again)')
    .option('--type <type>', 'auth or api')
    .option('--state <state>', `one of ${KEY_STATES.join(', ')}`)
    .option('--json', 'print the API response as JSON')
    .addHelpText('after', examples(['warren keys list', 'warren keys list --type auth --state valid --json']))
    .action(async (flags: { type?: string; state?: string; json?: boolean }) => {
      const type = flags.type === undefined ? undefined : oneOf('--type', flags.type, ['auth', 'api'] as const);
      const state = flags.state === undefined ? undefined : oneOf('--state', flags.state, KEY_STATES);
      const list = await connect(io).keys.list({ type, state });
      if (flags.json) return printJson(io, { keys: list });
      printTable(
        io,
        ['id', 'type', 'name', 'details', 'state', 'expires', 'uses', 'last used'],
        list.map((k) => [
          k.id,
          k.type,
          (k.type === 'api' ? k.name : k.description) || '-',
          traits(k),
          k.state,
          k.state === 'valid' ? until(k.expires) : '-',
          String(k.uses),
          ago(k.lastUsed),
        ]),
        'no keys match',
      );
    });

  keys
    .command('create')
    .description('create an auth key (default) or, with --api, an API key; prints its secret once')
    .option('--api', 'create an API key instead of an auth key')
    .option('--expires <duration>', 'lifetime: 90s, 15m, 24h, 30d … (default 90d, at most 365d)')
    .option('--description <text>', 'what the key is for')
    .option('--reusable', 'auth key: may enroll any number of devices (default: one)')
    .option('--ephemeral', 'auth key: its devices are removed 10 minutes after going offline')
    .option('--pre-approved', "auth key: its devices skip the network's device approval")
    .option('--tag <tag>', 'auth key: tag its devices (repeat for several)', collect)
    .option('--user <user>', "auth key: the user its devices belong to (default: the network's owner)")
    .option('--name <name>', 'API key: its name (shown in the audit log)')
    .option('--scope <scope>', `API key: ${SCOPES.join(', ')} (repeat for several)`, collect)
    .option('--rate-limit <n>', 'API key: requests per minute (only a key with scope "all" may set it)')
    .option('--json', 'print the API response, secret included, as JSON')
    .option('-q, --quiet', 'print only the secret')
    .addHelpText(
      'after',
      examples([
        'warren keys create --reusable --ephemeral --expires 24h --tag tag:ci --description "ci runners"',
        'AUTH_KEY=$(warren keys create --reusable --quiet)',
        'warren keys create --api --name deploy-bot --scope read --scope devices --expires 30d',
      ]),
    )
    .action(async (flags: CreateFlags) => {
      if (flags.quiet && flags.json) throw new UsageError('pass --json or --quiet, not both');
      const key = await connect(io).keys.create(createInput(flags));
      if (flags.quiet) io.out(`${key.key}\n`);
      else if (flags.json) printJson(io, key);
      else announce(io, key);
    });

  keys
    .command('get <id>')
    .description('show one key')
    .option('--json', 'print the API response as JSON')
    .addHelpText('after', examples(['warren keys get key_4d9q1']))
    .action(async (id: string, flags: { json?: boolean }) => {
      const key = await connect(io).keys.get(id);
      if (flags.json) printJson(io, key);
      else printKey(io, key);
    });

  keys
    .command('delete <id>')
    .description('revoke a key: it stops working at once (devices it enrolled stay)')
    .addHelpText('after', examples(['warren keys delete key_4d9q1']))
    .action(async (id: string) => {
      await connect(io).keys.delete(id);
      io.out(`revoked key ${id}\n`);
    });

  keys
    .command('set-limit <id> <perMinute>')
    .description("operator command: set an API key's requests per minute, directly on the database")
    .option('--db <url>', 'database URL (env WARREN_DB)')
    .addHelpText('after', examples(['warren keys set-limit key_4d9q1 1000 --db sqlite:./data/warren.db']))
    .action(async (id: string, perMinute: string, flags: { db?: string }) => {
      const limit = positiveInteger('the limit', perMinute);
      const { databaseUrl, redact, setKeyRateLimit } = await loadServer();
      const found = await withStorage(flags.db, (storage) => setKeyRateLimit(storage.db, id, limit, Date.now()));
      if (!found) throw new Error(`not_found: API key ${id} does not exist in ${redact(databaseUrl(flags.db))}`);
      io.out(`API key ${id} may now make ${limit} requests a minute\n`);
    });
}

/**
 * `warren logs connections|audit`: page through a log from `--since` on, or tail it with
 * `--follow` (the last nextCursor, asked again every two seconds; Ctrl-C ends it with 0).
 * People get aligned columns, printed page by page so a long log streams; `--json` prints
 * one entry per line (JSON lines) for jq and friends.
 */

import type { AuditEntryBody, ConnectionEntryBody, Page, Warren } from '@warren/client';
import type { Command } from 'commander';
import { resolveDevice } from './devices.js';
import { checkDuration, connect, examples, type Io, positiveInteger, UsageError, visible } from './output.js';

const MAX_PAGE = 1000;
const FOLLOW_INTERVAL_S = 2;

export interface CommonFlags {
  since?: string;
  limit?: string;
  follow?: boolean;
  interval?: string;
  json?: boolean;
}

/** Columns that keep their alignment across pages: each widens when a wider cell arrives. */
class StreamTable {
  private widths: number[] | undefined;
  constructor(
    private readonly io: Io,
    private readonly headers: string[],
  ) {}

  write(raw: string[][]): void {
    if (raw.length === 0) return;
    const rows = raw.map((row) => row.map(visible));
    if (!this.widths) {
      this.widths = this.headers.map((h) => h.length);
      this.grow(rows);
      this.print([this.headers.map((h) => h.toUpperCase())]);
    } else this.grow(rows);
    this.print(rows);
  }

  get printed(): boolean {
    return this.widths !== undefined;
  }

  private grow(rows: string[][]): void {
    const widths = this.widths as number[];
    for (const row of rows) {
      for (let i = 0; i < row.length; i++) widths[i] = Math.max(widths[i] ?? 0, (row[i] as string).length);
    }
  }

  private print(rows: string[][]): void {
    const widths = this.widths as number[];
    const last = this.headers.length - 1;
    this.io.out(
      rows
        .map(
          (row) =>
            `${row
              .map((c, i) => (i === last ? c : c.padEnd(widths[i] ?? 0)))
              .join('  ')
              .trimEnd()}\n`,
        )
        .join(''),
    );
  }
}

/** 1234567 → "1.2 MB"; exact figures are in --json. */
export function bytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB', 'PB'];
  let value = n;
  let unit = -1;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

export const compactTime = (iso: string) => iso.replace(/\.\d+Z$/, 'Z');

function parseLimit(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  return positiveInteger('--limit', text);
}

function parseInterval(text: string | undefined): number {
  if (text === undefined) return FOLLOW_INTERVAL_S * 1000;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) {
    throw new UsageError(
      `--interval must be a number of seconds greater than 0 and at most 3600, such as 2 or 0.5 (got "${text}")`,
    );
  }
  return seconds * 1000;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Aborts on Ctrl-C while following; the listener goes away with the command. */
function interruptible(follow: boolean | undefined): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  if (!follow) return { signal: controller.signal, release: () => {} };
  const onInterrupt = () => controller.abort();
  process.once('SIGINT', onInterrupt);
  return { signal: controller.signal, release: () => process.removeListener('SIGINT', onInterrupt) };
}

export interface TailOptions<T> {
  /** One page: the filters plus `since` on the first call, `cursor` afterwards. */
  fetchPage(query: { since?: string; cursor?: string; limit: number }, signal: AbortSignal): Promise<Page<T>>;
  since?: string;
  /** Stop after this many entries. */
  limit?: number;
  follow?: boolean;
  intervalMs: number;
  signal: AbortSignal;
  onEntries(entries: T[]): void | Promise<void>;
}

/**
 * Pages from `since` to the end of the log; when following, keeps asking with the last
 * cursor (which an empty page hands back unchanged), so nothing is skipped or repeated.
 * Returns how many entries were printed.
 */
export async function tail<T>(options: TailOptions<T>): Promise<number> {
  let printed = 0;
  let cursor: string | undefined;
  const remaining = () => (options.limit === undefined ? MAX_PAGE : Math.min(MAX_PAGE, options.limit - printed));
  try {
    for (;;) {
      const query =
        cursor === undefined ? { since: options.since, limit: remaining() } : { cursor, limit: remaining() };
      const page = await options.fetchPage(query, options.signal);
      cursor = page.nextCursor;
      if (page.entries.length > 0) await options.onEntries(page.entries);
      printed += page.entries.length;
      if (options.limit !== undefined && printed >= options.limit) return printed;
      if (page.hasMore) continue;
      if (!options.follow) return printed;
      await sleep(options.intervalMs, options.signal);
      if (options.signal.aborted) return printed;
    }
  } catch (error) {
    if (options.signal.aborted) return printed; // Ctrl-C during a request
    throw error;
  }
}

/** Device names for the table (ids of deleted devices stay ids); none if the key may not list devices. */
async function deviceNames(warren: Warren): Promise<Map<string, string>> {
  try {
    return new Map((await warren.devices.list()).map((d) => [d.id, d.name]));
  } catch {
    return new Map();
  }
}

function endpoint(end: { deviceId: string | null; addr: string }, names: Map<string, string>): string {
  if (!end.deviceId) return end.addr;
  return `${names.get(end.deviceId) ?? end.deviceId} ${end.addr}`;
}

function connectionRow(e: ConnectionEntryBody, names: Map<string, string>): string[] {
  return [
    compactTime(e.logged),
    compactTime(e.start),
    e.proto,
    endpoint(e.src, names),
    endpoint(e.dst, names),
    bytes(e.txBytes),
    bytes(e.rxBytes),
  ];
}

export function auditRow(e: AuditEntryBody): string[] {
  const who = e.keyName ? `${e.keyName} (${e.keyId})` : (e.deviceId ?? '-');
  const what = e.action ? `${e.action}${e.target ? ` ${e.target}` : ''}` : '-';
  return [compactTime(e.time), who, e.method, e.path, String(e.status), what, e.clientAddr];
}

/**
 * The paging flags every log-like command shares. `since: false` for a list that pages by
 * cursor alone (a webhook's deliveries), where a --since would be accepted and do nothing.
 */
export function addCommon(command: Command, { since = true } = {}): Command {
  if (since) command.option('--since <duration>', 'entries recorded in this window: 90s, 15m, 24h, 7d (default 1h)');
  return command
    .option('--limit <n>', 'stop after this many entries (default: all)')
    .option('-f, --follow', 'keep printing new entries as they are recorded (Ctrl-C to stop)')
    .option('--interval <seconds>', 'with --follow, how often to ask for new entries', String(FOLLOW_INTERVAL_S))
    .option('--json', 'one JSON object per line');
}

/** Every flag checked before the first request, so a typo never costs a round trip. */
export function tailFlags(flags: CommonFlags): { limit: number | undefined; intervalMs: number } {
  checkDuration('--since', flags.since);
  return { limit: parseLimit(flags.limit), intervalMs: parseInterval(flags.interval) };
}

export async function runTail<T>(
  io: Io,
  flags: CommonFlags,
  headers: string[],
  fetchPage: TailOptions<T>['fetchPage'],
  row: (entry: T) => string[],
  none: string,
): Promise<void> {
  const { limit, intervalMs } = tailFlags(flags);
  const table = new StreamTable(io, headers);
  const { signal, release } = interruptible(flags.follow);
  if (flags.follow && !flags.json) io.err('following the log; Ctrl-C to stop\n');
  try {
    await tail<T>({
      fetchPage,
      since: flags.since,
      limit,
      follow: flags.follow,
      intervalMs,
      signal,
      onEntries: (entries) => {
        if (flags.json) io.out(entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
        else table.write(entries.map(row));
      },
    });
  } finally {
    release();
  }
  if (!flags.follow && !flags.json && !table.printed) io.err(`${none}\n`);
}

export function registerLogCommands(program: Command, io: Io): void {
  const logs = program
    .command('logs')
    .description('read the connection log and the audit log')
    .addHelpText(
      'after',
      examples([
        'warren logs connections --since 24h',
        'warren logs audit --follow',
        'warren logs connections --json | jq .',
      ]),
    );

  addCommon(
    logs
      .command('connections')
      .description('connections that devices reported, oldest first')
      .option('--device <device>', 'only connections from or to this device (id or unique name)'),
  )
    .addHelpText(
      'after',
      examples([
        'warren logs connections --since 24h',
        'warren logs connections --device web-1 --follow',
        'warren logs connections --since 7d --json > connections.jsonl',
      ]),
    )
    .action(async (flags: CommonFlags & { device?: string }) => {
      tailFlags(flags);
      const warren = connect(io);
      const device = flags.device === undefined ? undefined : await resolveDevice(warren, flags.device);
      const names = flags.json ? new Map<string, string>() : await deviceNames(warren);
      await runTail<ConnectionEntryBody>(
        io,
        flags,
        ['logged', 'start', 'proto', 'source', 'destination', 'sent', 'received'],
        (query, signal) => warren.logs.connections({ ...query, device }, { signal }),
        (e) => connectionRow(e, names),
        `no connections recorded in the last ${flags.since ?? '1h'}`,
      );
    });

  addCommon(
    logs
      .command('audit')
      .description('every API call: who, what, when and how it ended, oldest first')
      .option('--key <id>', 'only calls made with this API key (key_…)'),
  )
    .addHelpText('after', examples(['warren logs audit --since 7d', 'warren logs audit --key key_3k9x --follow']))
    .action(async (flags: CommonFlags & { key?: string }) => {
      if (flags.key !== undefined && !flags.key.startsWith('key_')) {
        throw new UsageError(`--key must be an API key id, key_… (got "${flags.key}")`);
      }
      tailFlags(flags);
      const warren = connect(io);
      await runTail<AuditEntryBody>(
        io,
        flags,
        ['time', 'caller', 'method', 'path', 'status', 'change', 'client'],
        (query, signal) => warren.logs.audit({ ...query, key: flags.key }, { signal }),
        auditRow,
        `no calls recorded in the last ${flags.since ?? '1h'}`,
      );
    });
}

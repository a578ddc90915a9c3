/**
 * What every client command shares: where output goes (so tests can run the CLI in-process),
 * the client built from WARREN_URL and WARREN_API_KEY, aligned tables and key/value blocks
 * for people, JSON for scripts, and the two ways a command ends early (usage error, exit code).
 */
import { readFile } from 'node:fs/promises';
import { text as readAll } from 'node:stream/consumers';
import { Warren } from '@warren/client';
import { DURATION_RE } from '@warren/contract';
import { httpRequest } from './http-request.js';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
};

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** A mistake in how the command was called (exit code 2). */
export class UsageError extends Error {}

/** `value` when it is one of `allowed`; otherwise a usage error that lists them. */
export function oneOf<T extends string>(what: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`${what} must be one of ${allowed.join(', ')} (got "${value}")`);
  }
  return value as T;
}

/**
 * A whole number of at least 1 written as plain decimal digits. `Number()` alone would read
 * `0x10`, `1e2`, `+5` and ` 5` as numbers; a flag written that way is more likely a mistake.
 */
export function positiveInteger(what: string, text: string): number {
  const value = /^[0-9]{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= 1)) throw new UsageError(`${what} must be a positive integer (got "${text}")`);
  return value;
}

/** A duration flag (`90s`, `15m`, `24h`, `7d`), checked before any request is made. */
export function checkDuration(flag: string, value: string | undefined): void {
  if (value !== undefined && !DURATION_RE.test(value)) {
    throw new UsageError(`${flag} must be a duration such as 90s, 15m, 24h or 7d (got "${value}")`);
  }
}

/** A file a command was given, or a usage error that says why it cannot be read. */
export async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${file}${code === 'ENOENT' ? ': no such file' : code ? ` (${code})` : ''}`);
  }
}

/** A file a command was given, or stdin for `-` (a pipe from another program). */
export async function readInput(file: string): Promise<string> {
  return file === '-' ? await readAll(process.stdin) : await readText(file);
}

/** Ends the command with this exit code; whatever needed saying was already printed. */
export class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/**
 * The server's address, from WARREN_URL or a flag: an http(s) URL without the API's `/v1`,
 * which the client adds (`http://host:8080/v1` would ask for `/v1/v1/…` and get a 404 that
 * does not say why). Checked before any request, as a usage mistake.
 */
export function serverAddress(what: string, text: string): string {
  if (!/^https?:\/\//.test(text)) throw new UsageError(`${what} must start with http:// or https:// (got "${text}")`);
  let path: string;
  try {
    path = new URL(text).pathname;
  } catch {
    throw new UsageError(`${what} is not a URL (got "${text}")`);
  }
  if (/\/v1\/?$/.test(path)) throw new UsageError(`${what} is the server's address, without /v1 (got "${text}")`);
  return text;
}

/** The client for WARREN_URL (default http://127.0.0.1:8080) with WARREN_API_KEY. */
export function connect(io: Io): Warren {
  const apiKey = io.env.WARREN_API_KEY?.trim();
  if (!apiKey) {
    throw new UsageError(
      'WARREN_API_KEY is not set: export the API key that `npm start` (or `warren init`) printed, e.g. export WARREN_API_KEY=wrn_api_…',
    );
  }
  const url = serverAddress('WARREN_URL', io.env.WARREN_URL?.trim() || DEFAULT_URL);
  const reach: typeof fetch = async (input, init) => {
    try {
      return await httpRequest(input, init);
    } catch (error) {
      if (init?.signal?.aborted) throw error;
      const reason = error as { code?: string; message?: string };
      const cause = reason?.code ?? reason?.message;
      throw new Error(
        `cannot reach Warren at ${url}${cause ? ` (${cause})` : ''}: is \`warren serve\` running, and is WARREN_URL right?`,
      );
    }
  };
  return new Warren({ url, apiKey, fetch: reach });
}

export function printJson(io: Io, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
// C0 and C1 controls, DEL, and the bidirectional overrides and isolates ("Trojan Source").
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text from the server as people should see it: control characters shown as visible escapes
 * (`\n`, `\x1b`, `\u202e`) instead of being sent to the terminal, where a device's hostname
 * or a key's description could otherwise move the cursor, recolour or rewrite what is shown.
 * JSON output never goes through this: it is printed exactly.
 */
export function visible(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const named = ESCAPES[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Columns padded to their widest cell, two spaces apart, header in capitals; no trailing blanks. */
export function table(headers: string[], rows: string[][]): string {
  const all = [headers.map((h) => h.toUpperCase()), ...rows.map((row) => row.map(visible))];
  const widths = headers.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  return all
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** A table of rows, or a note on stderr when there are none (stdout stays empty for pipes). */
export function printTable(io: Io, headers: string[], rows: string[][], none: string): void {
  if (rows.length === 0) io.err(`${none}\n`);
  else io.out(table(headers, rows));
}

/** `label  value` lines, labels aligned. */
export function printFields(io: Io, fields: [string, string][]): void {
  const width = Math.max(...fields.map(([label]) => label.length));
  io.out(fields.map(([label, value]) => `${label.padEnd(width)}  ${visible(value)}\n`).join(''));
}

function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** "5m ago", "just now", or "never" for a time in the past. */
export function ago(time: string | null | undefined, now = Date.now()): string {
  if (!time) return 'never';
  const ms = now - Date.parse(time);
  return ms < 1000 ? 'just now' : `${span(ms)} ago`;
}

/** "in 23h" for a time in the future, "expired" once it passed. */
export function until(time: string | null | undefined, now = Date.now()): string {
  if (!time) return 'never';
  const ms = Date.parse(time) - now;
  return ms <= 0 ? 'expired' : `in ${span(ms)}`;
}

/** For repeatable options: `--tag a --tag b` → ['a', 'b']. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** "Examples:" help text appended to a command's --help. */
export function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}\n`;
}

/**
 * The log destination writes every line, byte for byte, in order, whatever the line's
 * characters: lines written while a write is in flight wait for it, and `flushSync` leaves
 * nothing pending. Lines are handed over at the end of their turn of the event loop: a lone
 * line is written without waiting for more, and a process that exits in the turn it logged
 * leaves its last lines written.
 */
import { execFileSync } from 'node:child_process';
import { pbkdf2 } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { logDestination } from '../../src/lib/log-destination.js';

describe('log destination', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function file(): { path: string; fd: number } {
    const dir = mkdtempSync(join(tmpdir(), 'warren-log-'));
    dirs.push(dir);
    const path = join(dir, 'log');
    return { path, fd: openSync(path, 'a') };
  }

  it('writes lines of multi-byte characters whole and in order, asynchronously and on flushSync', async () => {
    const { path, fd } = file();
    const destination = logDestination(fd);
    const lines = Array.from(
      { length: 2_000 },
      (_, i) => `${JSON.stringify({ i, path: `/v1/us\u00e9rs/${'\u{1F600}'.repeat(i % 7)}`, msg: 'request' })}\n`,
    );
    const first = lines.slice(0, 1_000).join('');
    for (const line of lines.slice(0, 1_000)) destination.write(line);
    // Written asynchronously, without flushSync: waited for, so that no write is in flight when
    // flushSync runs (SonicBoom's flushSync does not wait for one).
    for (let i = 0; i < 200 && readFileSync(path, 'utf8') !== first; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(readFileSync(path, 'utf8')).toBe(first);
    for (const line of lines.slice(1_000)) destination.write(line);
    destination.flushSync();
    closeSync(fd);
    expect(readFileSync(path, 'utf8')).toBe(lines.join(''));
  });

  it('writes the lines of the turn on flushSync itself, while the thread pool is busy', async () => {
    const { path, fd } = file();
    const destination = logDestination(fd);
    // libuv's pool, where an asynchronous write would wait, is kept busy until after the check.
    const busy = Array.from(
      { length: 16 },
      () => new Promise((resolve) => pbkdf2('x', 'y', 200_000, 32, 'sha256', resolve)),
    );
    destination.write('{"msg":"last"}\n');
    destination.flushSync();
    expect(readFileSync(path, 'utf8')).toBe('{"msg":"last"}\n');
    closeSync(fd);
    await Promise.all(busy);
  });

  it('writes a lone line without more traffic and without flushSync', async () => {
    const { path, fd } = file();
    const destination = logDestination(fd);
    destination.write('{"msg":"alone"}\n');
    for (let i = 0; i < 100 && readFileSync(path, 'utf8') === ''; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(readFileSync(path, 'utf8')).toBe('{"msg":"alone"}\n');
    closeSync(fd);
  });

  it('leaves the lines of the turn in which the process exits written', () => {
    const { path, fd } = file();
    closeSync(fd);
    const script = [
      "import { openSync } from 'node:fs';",
      `import { logDestination } from ${JSON.stringify(new URL('../../src/lib/log-destination.ts', import.meta.url).pathname)};`,
      `const destination = logDestination(openSync(${JSON.stringify(path)}, 'a'));`,
      'destination.write(\'{"msg":"first"}\\n\');',
      'destination.write(\'{"msg":"last"}\\n\');',
      'process.exit(3);',
    ].join('\n');
    expect(() => execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script])).toThrow();
    expect(readFileSync(path, 'utf8')).toBe('{"msg":"first"}\n{"msg":"last"}\n');
  });
});

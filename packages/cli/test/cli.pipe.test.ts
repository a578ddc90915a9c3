/**
 * How a following command ends when it is a process: output piped into a reader that stops
 * early (`| head`) ends it quietly with 0 instead of an EPIPE crash; Ctrl-C ends it with 0.
 * Run as processes, since only a real pipe can close and only a process gets a signal.
 */
import { spawn } from 'node:child_process';
import { startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WARREN_FROM_SOURCES } from './bin.js';
import { envOf } from './run.js';

// tsx compiles the sources at every start: on a busy machine a start alone can take 10 s.
const SPAWN_MS = 45_000;

describe('warren output into a pipe that closes', { timeout: 2 * SPAWN_MS }, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('logs audit --follow | head: exit 0 and nothing on stderr but the note', async () => {
    // Each poll is itself an audited call, so the followed log grows at every interval and the
    // command keeps writing after the reader is gone.
    const child = spawn(
      process.execPath,
      [...WARREN_FROM_SOURCES, 'logs', 'audit', '--since', '1h', '--follow', '--interval', '0.1'],
      { env: { ...process.env, ...envOf(server) } },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    // The first line read, the reader goes away, as `head -1` does.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toContain('EPIPE');
    expect(stderr).toBe('following the log; Ctrl-C to stop\n');
    expect(code).toBe(0);
  });

  it('logs connections --follow: Ctrl-C ends it with 0', async () => {
    const child = spawn(
      process.execPath,
      [...WARREN_FROM_SOURCES, 'logs', 'connections', '--since', '24h', '--follow'],
      {
        env: { ...process.env, ...envOf(server) },
      },
    );
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
      // Interrupted once it is following, as a person pressing Ctrl-C in the terminal.
      if (stderr.includes('Ctrl-C to stop')) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('following the log; Ctrl-C to stop\n');
    expect(code).toBe(0);
  });
});

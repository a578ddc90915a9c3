/**
 * Another instance in a process of its own over a test server's database, as a second
 * `warren serve` is: unlike `secondInstance` (harness.ts), it shares no module state with the
 * test's instance, so what reaches it can only have come through the database. It runs the
 * sources through tsx, which takes a few seconds to start on a busy machine.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import type { TestServer } from './harness.js';

const SRC = join(import.meta.dirname, '..', 'src');

const MAIN = `
const [app, database, url, schema] = process.argv.slice(2);
const { openStorage } = await import(database);
const { buildApp } = await import(app);
const storage = await openStorage(url, schema ? { schema, poolSize: 3 } : {});
const server = await buildApp({ storage, console: false, settings: { apiRateLimit: 100000 } });
await server.listen({ host: '127.0.0.1', port: 0 });
process.on('SIGTERM', async () => {
  await server.close();
  await storage.close();
  process.exit(0);
});
process.stdout.write(JSON.stringify({ port: server.server.address().port }) + '\\n');
`;

/**
 * The program as a file rather than `--eval`: a process's worker threads (the policy pool's)
 * inherit its flags, and `--input-type` stops a worker that loads a file.
 */
let mainFile: string | undefined;
function programFile(): string {
  mainFile ??= join(mkdtempSync(join(tmpdir(), 'warren-instance-')), 'main.mjs');
  writeFileSync(mainFile, MAIN);
  return mainFile;
}

export interface InstanceProcess {
  url: string;
  /** Stops it gracefully (SIGKILL after 10 s). */
  close(): Promise<void>;
}

export async function instanceProcess(server: TestServer): Promise<InstanceProcess> {
  const { url, schema } = server.database;
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--conditions=@warren/source',
      '--import',
      'tsx',
      programFile(),
      pathToFileURL(join(SRC, 'app.ts')).href,
      pathToFileURL(join(SRC, 'storage', 'database.ts')).href,
      url,
      schema ?? '',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line).port));
      child.once('exit', (code) => reject(new Error(`the instance process exited (${code}) before it listened`)));
    });
    return { url: `http://127.0.0.1:${port}`, close };
  } catch (error) {
    await close();
    throw error;
  }
}

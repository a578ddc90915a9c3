/**
 * `warren serve`: config → storage (migrated) → first network if the database is empty →
 * buildApp → listen. SIGTERM/SIGINT stop accepting, finish in-flight requests, flush the
 * audit log and close the database. What the command is for (the first API key, the address
 * it serves on) goes to `out` (stdout); request logs are pino JSON lines on stderr, so
 * `warren serve > banner.txt` keeps the key apart from the log.
 */
import { buildApp } from './app.js';
import { logLevel, type ServeConfig } from './config.js';
import { registerConsole } from './http/console.js';
import { bootstrapIfEmpty } from './modules/network/network.service.js';
import { openStorage } from './storage/database.js';

export async function serve(
  config: ServeConfig,
  out: NodeJS.WritableStream = process.stdout,
): Promise<() => Promise<void>> {
  const storage = await openStorage(config.db);
  const created = await bootstrapIfEmpty(storage.db, Date.now());
  const app = await buildApp({
    storage,
    logger: { level: logLevel(), stream: process.stderr },
    settings: {
      webhooksAllowPrivate: config.webhooksAllowPrivate,
      ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
    },
  });
  registerConsole(app);
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  if (created) {
    out.write(
      [
        '',
        `Warren created the network "default" (${created.networkId}).`,
        'Its first API key (scope "all", valid for 90 days) is shown only this once — keep it:',
        '',
        `  ${created.apiKey}`,
        '',
        'Use it from a shell:',
        `  export WARREN_URL=${url} WARREN_API_KEY=${created.apiKey}`,
        '',
        '',
      ].join('\n'),
    );
  }
  out.write(`Warren is serving on ${url} (database ${redact(config.db)})\n`);
  out.write(`The console: ${url}/ (sign in with a one-time link or single sign-on)\n`);

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await app.close(); // waits for in-flight requests, then flushes the audit log
      await storage.close();
    })();
    return stopping;
  };
  return stop;
}

/** Never print a database password. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

export function stopOnSignals(stop: () => Promise<void>): void {
  const handler = (signal: string) => {
    process.stderr.write(`\nreceived ${signal}; finishing in-flight requests…\n`);
    stop().then(
      () => process.exit(0),
      (error) => {
        process.stderr.write(`shutdown failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => handler('SIGTERM'));
  process.once('SIGINT', () => handler('SIGINT'));
}

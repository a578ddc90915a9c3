#!/usr/bin/env node
/**
 * The packed command carries the console's build in `console/` (the server serves it from
 * there), copied when it is packed and removed afterwards, so that a checkout always serves
 * packages/console/dist, the build `npm start` keeps current.
 */
import { cpSync, existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..');
const copy = join(cli, 'console');
rmSync(copy, { recursive: true, force: true });
if (!process.argv.includes('--remove')) {
  const built = join(cli, '..', 'console', 'dist');
  if (!existsSync(join(built, 'index.html'))) throw new Error(`the console is not built (${built})`);
  cpSync(built, copy, { recursive: true });
}

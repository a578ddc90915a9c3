#!/usr/bin/env node
/**
 * Builds the console (vite build → packages/console/dist) when the build is missing or older
 * than any of its sources, so `npm start` serves a current console with no extra command and
 * a second start costs a directory walk, not a build.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'index.html');
const sources = ['src', 'index.html', 'vite.config.ts', 'package.json', '../client/src', '../contract/src'];

function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), stat.mtimeMs);
}

const builtAt = existsSync(built) ? statSync(built).mtimeMs : 0;
const changedAt = Math.max(...sources.map((s) => newest(join(root, s))));
if (builtAt > changedAt && !process.argv.includes('--force')) process.exit(0);

process.stderr.write('Building the web console…\n');
const vite = join(dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');
const result = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);

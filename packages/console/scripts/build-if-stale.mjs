#!/usr/bin/env node
/**
 * Builds the console (vite build → packages/console/dist) when the build is missing or older
 * than any of its sources, so `npm start` serves a current console with no extra command and
 * a second start costs a directory walk, not a build.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isStale } from '../../../scripts/stale.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const sources = ['src', 'public', 'index.html', 'vite.config.ts', 'package.json', '../client/src', '../contract/src'];

if (
  !isStale(
    join(root, 'dist', 'index.html'),
    sources.map((s) => join(root, s)),
  ) &&
  !process.argv.includes('--force')
) {
  process.exit(0);
}

process.stderr.write('Building the web console…\n');
const vite = join(dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');
const result = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);

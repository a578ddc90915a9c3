#!/usr/bin/env node
// The warren command: its build in ../dist (made by `npm install` in a checkout, shipped in the
// package). Node's compile cache (22.1 and later) saves parsing the same code at every start.
import { existsSync } from 'node:fs';
import module from 'node:module';

const entry = new URL('../dist/warren.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('warren: the command is not built; run `npm install` or `npm run build` in the checkout\n');
  process.exit(1);
}
module.enableCompileCache?.();
await import(entry.href);

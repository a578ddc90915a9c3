/**
 * The node arguments that start the `warren` command from its TypeScript sources, for tests
 * that spawn it: `npm test` checks the code as it is, not the last build (bin/warren.js runs
 * the build, which the packaging checks in .ci/pack.sh exercise). tsx is named by its file, so
 * the command starts from any working folder, not only from inside the checkout.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const WARREN_FROM_SOURCES = [
  '--conditions=@warren/source',
  '--import',
  pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href,
  join(import.meta.dirname, '..', 'src', 'bin.ts'),
];

/**
 * The node arguments that start the `warren` command from its TypeScript sources, for tests
 * that spawn it: `npm test` checks the code as it is, not the last build (bin/warren.js runs
 * the build, which the packaging checks in .ci/pack.sh exercise).
 */
import { join } from 'node:path';

export const WARREN_FROM_SOURCES = [
  '--conditions=@warren/source',
  '--import',
  'tsx',
  join(import.meta.dirname, '..', 'src', 'bin.ts'),
];

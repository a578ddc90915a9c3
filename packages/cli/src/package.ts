/**
 * Where this package's files are. The sources (src/) and the build (dist/, one flat folder)
 * both sit one folder below the package, so the same paths hold for both.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

/** The release of this command, from its own package.json rather than the server's code. */
export const VERSION: string = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')).version;

/**
 * The console's build: the copy a packed command carries (made by `npm pack`), else the one in
 * the checkout beside this package; undefined leaves the server to its own default.
 */
export function consoleDir(): string | undefined {
  return [join(PACKAGE_DIR, 'console'), join(PACKAGE_DIR, '..', 'console', 'dist')].find((dir) =>
    existsSync(join(dir, 'index.html')),
  );
}

/**
 * How a printed command should start. In a checkout (its sources are here) `npm install` links
 * `warren` into node_modules/.bin, not onto PATH, so the command there is `npx warren`; an
 * installed package (`npm install -g`) puts `warren` on PATH.
 */
export const COMMAND = existsSync(join(PACKAGE_DIR, 'src', 'bin.ts')) ? 'npx warren' : 'warren';

/**
 * The packed command bundles the workspace packages' code but imports their libraries, so it
 * must depend on every library they use at run time, in the same range: one missing here
 * installs fine and fails only when `warren serve` first imports it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const packages = join(import.meta.dirname, '..', '..');
const manifest = (name: string) =>
  JSON.parse(readFileSync(join(packages, name, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };

describe('the @warren/cli package', () => {
  const cli = manifest('cli');

  it.each(['contract', 'client', 'server'])('depends on every library @warren/%s imports at run time', (name) => {
    const libraries = Object.entries(manifest(name).dependencies ?? {}).filter(([lib]) => !lib.startsWith('@warren/'));
    for (const [lib, range] of libraries) expect(cli.dependencies?.[lib], lib).toBe(range);
  });

  it('bundles the workspace packages instead of depending on them', () => {
    expect(Object.keys(cli.dependencies ?? {}).filter((lib) => lib.startsWith('@warren/'))).toEqual([]);
  });
});

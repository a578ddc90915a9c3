#!/usr/bin/env node
/**
 * Builds the packages to JavaScript, each only when its build is older than its sources, so
 * `npm install` and `npm start` cost a directory walk once everything is built:
 *
 * - @warren/contract and @warren/client: ES modules and CommonJS (dist/esm, dist/cjs) by tsc,
 *   with declarations and source maps;
 * - @warren/server: ES modules by tsc (dist), with declarations and source maps;
 * - the web console: Vite (packages/console/scripts/build-if-stale.mjs);
 * - @warren/cli: one bundle by esbuild (dist/warren.js) holding the command and, in chunks of
 *   their own that only serve, init and the operator commands load, the server's code. The
 *   workspace packages are bundled in from their sources, so the packed command needs none of
 *   them from a registry; the server's libraries stay dependencies of @warren/cli.
 *
 * `--force` builds everything again.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isStale } from './stale.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const force = process.argv.includes('--force');
const require = createRequire(import.meta.url);
const tsc = join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
const shared = [join(root, 'tsconfig.json'), join(root, 'scripts', 'build.mjs')];

function stale(pkg, built, sources) {
  const dir = join(root, 'packages', pkg);
  const paths = [...sources.map((s) => join(dir, s)), ...shared];
  if (!force && !isStale(join(dir, built), paths)) return undefined;
  process.stderr.write(`Building @warren/${pkg}…\n`);
  rmSync(join(dir, 'dist'), { recursive: true, force: true });
  return dir;
}

function run(args, cwd) {
  const result = spawnSync(process.execPath, args, { cwd, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/**
 * A CommonJS declaration may import an ES-module-only package (typebox) for its types alone,
 * and says so (`resolution-mode`); as tsc writes it, a strict consumer under `node16`
 * resolution is told the import cannot be a `require` (TS1479).
 */
function typeOnlyImportsOf(dir, esmOnly) {
  const from = new RegExp(`^import \\{([^}]*)\\} from '(${esmOnly.join('|')})';$`, 'gm');
  for (const name of readdirSync(dir, { recursive: true })) {
    if (!name.endsWith('.d.ts')) continue;
    const path = join(dir, name);
    const text = readFileSync(path, 'utf8');
    const rewritten = text.replace(from, (_, names, module) => {
      const bare = names.replaceAll(/\btype\s+/g, '').trim();
      return `import type { ${bare} } from '${module}' with { 'resolution-mode': 'import' };`;
    });
    if (rewritten !== text) writeFileSync(path, rewritten);
  }
}

/** ES modules and CommonJS from the same sources; dist/cjs says it holds CommonJS. */
function dual(pkg, esmOnly = []) {
  const dir = stale(pkg, 'dist/cjs/package.json', ['src', 'package.json', 'tsconfig.build.json', 'tsconfig.cjs.json']);
  if (!dir) return;
  run([tsc, '-p', 'tsconfig.build.json'], dir);
  run([tsc, '-p', 'tsconfig.cjs.json'], dir);
  if (esmOnly.length > 0) typeOnlyImportsOf(join(dir, 'dist', 'cjs'), esmOnly);
  // Written last: its time is the build's (see stale above).
  writeFileSync(join(dir, 'dist', 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
}

function server() {
  const dir = stale('server', 'dist/storage/wal-checkpoint.worker.mjs', ['src', 'package.json', 'tsconfig.build.json']);
  if (!dir) return;
  run([tsc, '-p', 'tsconfig.build.json'], dir);
  // The checkpointer's thread is plain JavaScript, loaded by path beside its module.
  copyFileSync(join(dir, 'src/storage/wal-checkpoint.worker.mjs'), join(dir, 'dist/storage/wal-checkpoint.worker.mjs'));
}

async function cli() {
  const sources = ['cli/src', 'cli/package.json', 'contract/src', 'client/src', 'server/src'].map((s) => `../${s}`);
  const dir = stale('cli', 'dist/wal-checkpoint.worker.mjs', sources);
  if (!dir) return;
  const { build } = await import('esbuild');
  await build({
    entryPoints: {
      warren: join(dir, 'src/bin.ts'),
      // The policy engine's thread, loaded by path beside the chunk that starts it.
      'policy.worker': join(root, 'packages/server/src/modules/acl/policy.worker.ts'),
    },
    outdir: join(dir, 'dist'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.12',
    sourcemap: true,
    // The workspace packages from their TypeScript sources; every other package stays an import.
    conditions: ['@warren/source'],
    plugins: [
      {
        name: 'external-libraries',
        setup(on) {
          on.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith('@warren/') ? undefined : { external: true },
          );
        },
      },
    ],
    logLevel: 'warning',
  });
  copyFileSync(
    join(root, 'packages/server/src/storage/wal-checkpoint.worker.mjs'),
    join(dir, 'dist/wal-checkpoint.worker.mjs'),
  );
}

function consoleApp() {
  run([join(root, 'packages/console/scripts/build-if-stale.mjs'), ...(force ? ['--force'] : [])], root);
}

mkdirSync(join(root, 'packages'), { recursive: true });
dual('contract', ['typebox']);
dual('client');
server();
consoleApp();
await cli();

// `npm run bench [-- NAME …]`: runs each benchmark in its own process (so one's heap and
// database do not skew the next) and prints their figures. Names: policy, policy-adversarial, devices, netmap,
// connections, api, reads, webhooks, soak, console, cli, tailscale, tailscale-memory. Each benchmark prints its own baseline and ratio; see the file's header.
// Benchmarks that start `warren serve` as a child (api, reads, soak, console, cli, tailscale, …)
// pass it the node arguments in WARREN_BENCH_NODE_ARGS (bench/warren-process.ts), e.g. a CPU
// profile of each server:
//   WARREN_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench -- tailscale
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const ALL = [
  'policy',
  'policy-adversarial',
  'devices',
  'netmap',
  'connections',
  'api',
  'reads',
  'webhooks',
  'soak',
  'console',
  'cli',
  'tailscale',
  'tailscale-memory',
];
// Names come first; flags after them (`npm run bench -- api --devices 2000`) go to each benchmark.
const args = process.argv.slice(2);
const firstFlag = args.findIndex((arg) => arg.startsWith('--'));
const requested = firstFlag === -1 ? args : args.slice(0, firstFlag);
const passed = firstFlag === -1 ? [] : args.slice(firstFlag);
const names = requested.length > 0 ? requested : ALL;
const tsx = join(import.meta.dirname, '..', 'node_modules', '.bin', 'tsx');

let failed = 0;
for (const name of names) {
  const file = join(import.meta.dirname, `${name}.bench.ts`);
  if (!existsSync(file)) {
    process.stderr.write(`no benchmark named "${name}" (have: ${ALL.join(', ')})\n`);
    failed++;
    continue;
  }
  process.stdout.write(`\n=== ${name} ===\n`);
  // The workspace packages from their sources, as in the tests (see vitest.config.ts).
  const result = spawnSync(tsx, ['--conditions=@warren/source', file, ...passed], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);

// Hostile policies against a running server: `npm run bench -- policy-adversarial`.
//
// For each shape of test/policy/adversarial-shapes.ts at 1 MiB (many members, groups, rules,
// tests, hosts, a wide grant, long selectors, deep nesting, repeated sections, …) it sends
// POST /v1/acl/validate to `warren serve` (a child process, as users run it) and, while that
// runs, probes /healthz back to back. It prints the validation's time and answer, and the p99 of
// /healthz during it next to the p99 of an idle /healthz measured in the same run (the baseline).
// Goals: every shape validated or refused in under 2 s; /healthz p99 under 50 ms during any.
//
// Flags: --kib N (document size, default 1024), --only TEXT (shapes whose name contains it).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHAPES, sizeFor } from '../packages/server/test/policy/adversarial-shapes.js';
import { initWarren, serveWarren } from './warren-process.js';

const flag = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const KIB = Number(flag('kib') ?? 1024);
const ONLY = flag('only');

const p99 = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? Number.NaN;
};

async function healthOnce(url: string): Promise<number> {
  const start = performance.now();
  const res = await fetch(`${url}/healthz`);
  await res.arrayBuffer();
  return performance.now() - start;
}

/** /healthz latencies, one request after another, until `done` says stop. */
async function probe(url: string, done: () => boolean): Promise<number[]> {
  const samples: number[] = [];
  while (!done()) {
    samples.push(await healthOnce(url));
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return samples;
}

const dir = mkdtempSync(join(tmpdir(), 'warren-bench-adversarial-'));
const db = `sqlite:${join(dir, 'warren.db')}`;
const apiKey = initWarren(db);
const { url, child } = await serveWarren(db, { env: { WARREN_LOG_LEVEL: 'warn' } });
try {
  for (let i = 0; i < 50; i++) await healthOnce(url); // warm
  let stopIdle = false;
  const idleRun = probe(url, () => stopIdle);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  stopIdle = true;
  const idle = p99(await idleRun);
  process.stdout.write(`document size ${KIB} KiB; idle /healthz p99 ${idle.toFixed(1)} ms (baseline)\n\n`);
  process.stdout.write(
    `${'shape'.padEnd(38)}${'n'.padStart(8)}${'answer'.padStart(22)}${'validate'.padStart(11)}${'healthz p99'.padStart(13)}${'× idle'.padStart(9)}\n`,
  );
  // The server's own first validation starts its worker threads: not a shape's cost.
  await fetch(`${url}/v1/acl/validate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/hujson' },
    body: '{}',
  });
  let worstValidate = 0;
  let worstHealth = 0;
  for (const shape of SHAPES) {
    if (ONLY && !shape.name.includes(ONLY)) continue;
    const n = sizeFor(shape, KIB * 1024);
    const text = shape.build(n);
    let finished = false;
    const health = probe(url, () => finished);
    const start = performance.now();
    const res = await fetch(`${url}/v1/acl/validate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/hujson' },
      body: text,
    });
    const body = (await res.json()) as { valid?: boolean; errors?: unknown[]; code?: string };
    const took = performance.now() - start;
    finished = true;
    const during = p99(await health);
    const answer =
      res.status === 200
        ? body.valid
          ? 'valid'
          : `invalid (${body.errors?.length} err)`
        : `${res.status} ${body.code}`;
    worstValidate = Math.max(worstValidate, took);
    worstHealth = Math.max(worstHealth, during);
    process.stdout.write(
      `${shape.name.padEnd(38)}${String(n).padStart(8)}${answer.padStart(22)}${`${took.toFixed(0)} ms`.padStart(11)}${`${during.toFixed(1)} ms`.padStart(13)}${`${(during / idle).toFixed(1)}×`.padStart(9)}\n`,
    );
  }
  process.stdout.write(
    `\nslowest validation ${worstValidate.toFixed(0)} ms (goal < 2000 ms); worst /healthz p99 ${worstHealth.toFixed(1)} ms (goal < 50 ms, idle ${idle.toFixed(1)} ms)\n`,
  );
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
}

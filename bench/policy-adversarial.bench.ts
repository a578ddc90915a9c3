// Hostile policies against a running server: `npm run bench -- policy-adversarial`.
//
// For each shape of test/policy/adversarial-shapes.ts at 1 MiB (many members, groups, rules,
// tests, hosts, a wide grant, long selectors, deep nesting, repeated sections, …) it sends
// POST /v1/acl/validate to `warren serve` (a child process, as users run it) and, while that
// runs, probes /healthz back to back. It prints the validation's time and answer, and the p99 of
// /healthz during it next to the p99 of an idle /healthz measured in the same run (the baseline).
// A shape that is valid is then stored (PUT /v1/acl, which also builds the indexes netmaps are
// served from) with the same probe, and the same figures are printed for that, with the longest
// /healthz wait. Goals: every shape validated or refused in under 2 s; /healthz p99 under 50 ms
// during any validation or store.
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

const worst = (samples: number[]) => Math.max(...samples);
const quantile = (samples: number[], q: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
};
const p50 = (samples: number[]) => quantile(samples, 0.5);
const p99 = (samples: number[]) => quantile(samples, 0.99);

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
  const idleSamples = await idleRun;
  const idle = p99(idleSamples);
  process.stdout.write(
    `document size ${KIB} KiB; idle /healthz p50 ${p50(idleSamples).toFixed(1)} ms, p99 ${idle.toFixed(1)} ms (baseline)\n\n`,
  );
  process.stdout.write(
    `${'shape'.padEnd(38)}${'n'.padStart(8)}${'request'.padStart(10)}${'answer'.padStart(22)}${'took'.padStart(10)}${'healthz p50'.padStart(13)}${'p99'.padStart(10)}${'× idle'.padStart(9)}${'max'.padStart(10)}\n`,
  );
  // The server's own first validation starts its worker threads: not a shape's cost.
  await fetch(`${url}/v1/acl/validate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/hujson' },
    body: '{}',
  });
  const worstOf = { validate: { took: 0, p99: 0 }, store: { took: 0, p99: 0 } };
  /** One request with /healthz probed while it runs: its answer, time and the probe's figures. */
  async function underProbe(request: 'validate' | 'store', text: string) {
    let finished = false;
    const health = probe(url, () => finished);
    const start = performance.now();
    const res = await fetch(request === 'validate' ? `${url}/v1/acl/validate` : `${url}/v1/acl`, {
      method: request === 'validate' ? 'POST' : 'PUT',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/hujson' },
      body: text,
    });
    const body = (await res.json()) as { valid?: boolean; errors?: unknown[]; code?: string };
    const took = performance.now() - start;
    finished = true;
    const samples = await health;
    const answer =
      res.status !== 200
        ? `${res.status} ${body.code}`
        : request === 'store'
          ? 'stored'
          : body.valid
            ? 'valid'
            : `invalid (${body.errors?.length} err)`;
    worstOf[request].took = Math.max(worstOf[request].took, took);
    worstOf[request].p99 = Math.max(worstOf[request].p99, p99(samples));
    return {
      answer,
      took,
      median: p50(samples),
      during: p99(samples),
      max: worst(samples),
      valid: res.status === 200 && body.valid,
    };
  }
  for (const shape of SHAPES) {
    if (ONLY && !shape.name.includes(ONLY)) continue;
    const n = sizeFor(shape, KIB * 1024);
    const text = shape.build(n);
    for (const request of ['validate', 'store'] as const) {
      const r = await underProbe(request, text);
      process.stdout.write(
        `${(request === 'validate' ? shape.name : '').padEnd(38)}${(request === 'validate' ? String(n) : '').padStart(8)}${request.padStart(10)}${r.answer.padStart(22)}${`${r.took.toFixed(0)} ms`.padStart(10)}${`${r.median.toFixed(1)} ms`.padStart(13)}${`${r.during.toFixed(1)} ms`.padStart(10)}${`${(r.during / idle).toFixed(1)}×`.padStart(9)}${`${r.max.toFixed(0)} ms`.padStart(10)}\n`,
      );
      if (!r.valid) break;
    }
  }
  process.stdout.write(
    `\nslowest validation ${worstOf.validate.took.toFixed(0)} ms (goal < 2000 ms); worst /healthz p99 during a validation ${worstOf.validate.p99.toFixed(1)} ms, during a store ${worstOf.store.p99.toFixed(1)} ms (goal < 50 ms, idle ${idle.toFixed(1)} ms)\n`,
  );
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
}

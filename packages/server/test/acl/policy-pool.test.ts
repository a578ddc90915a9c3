/**
 * The policy pool's budget is the worker thread's CPU time, not wall time: a document that
 * costs too much is refused however idle the machine, and a cheap one is accepted however long
 * the worker waits for a CPU, up to a wall-clock ceiling. Real workers throughout; where a test
 * replaces the CPU clock, it stands for a worker the machine starved, and the last test starves
 * one for real.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import { threadCpuMs } from '../../src/lib/thread-cpu.js';
import { PolicyPool, type PolicyPoolOptions } from '../../src/modules/acl/policy-pool.js';
import { SHAPES, sizeFor } from '../policy/adversarial-shapes.js';

// The heaviest linear shape: about 1 MiB is well over a second of CPU on any machine; a quarter
// of it is still far over the 50 ms budgets below, and cheap enough to validate whole.
const shape = (name: string) => {
  const found = SHAPES.find((s) => s.name === name);
  if (!found) throw new Error(`missing shape ${name}`);
  return found;
};
const tests = shape('tests');
const rules = shape('rules');
const HEAVY = tests.build(sizeFor(tests, 1000 * 1024));
const COSTLY = tests.build(sizeFor(tests, 256 * 1024));

const CHEAP = JSON.stringify({
  groups: { 'group:eng': ['alice@example.com'] },
  acls: [
    { action: 'accept', src: ['group:eng'], dst: ['*:22'] },
    { action: 'accept', src: ['bob@example.com'], dst: ['alice@example.com:*'] },
    { action: 'accept', src: ['autogroup:member'], dst: ['autogroup:self:*'] },
  ],
});

const BUDGET_MS = 50;
/** A wall ceiling of 60 s: only the CPU budget can refuse a document in these tests' time. */
const FAR_CEILING = 60_000 / BUDGET_MS;

let pool: PolicyPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

function startPool(options: Partial<PolicyPoolOptions>): PolicyPool {
  pool = new PolicyPool({ size: 1, budgetMs: BUDGET_MS, wallCeilingFactor: FAR_CEILING, ...options });
  return pool;
}

/** What the validation of `text` was refused with (fails the test if it was not refused). */
async function refusal(pool: PolicyPool, text: string): Promise<ApiError> {
  const error = await pool.validate(text).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).code).toBe('policy_too_complex');
  return error as ApiError;
}

describe.runIf(process.platform === 'linux')('the policy budget on Linux', () => {
  it('refuses a costly document for the CPU it used, not the time it took', async () => {
    const error = await refusal(startPool({}), COSTLY);
    expect(error.detail).toContain(`over ${BUDGET_MS} ms of processor time`);
  }, 60_000);

  it('gives a worker that used little CPU the time it needs, past the budget in wall time', async () => {
    // The clock says the worker used no CPU: what a worker waiting behind busier threads reports.
    const reads: string[] = [];
    const result = await startPool({
      threadCpuMs: (thread) => {
        reads.push(thread);
        return 0;
      },
    }).validate(COSTLY);
    expect(result).toMatchObject({ valid: true, errors: [] });
    // Read when the job started, then each time the timer found it under the budget and re-armed.
    expect(reads.length).toBeGreaterThanOrEqual(2);
    expect(reads[0]).toMatch(/^\/proc\/\d+\/task\/\d+$/);
  }, 60_000);

  it('still stops a starved worker at the wall ceiling', async () => {
    const error = await refusal(startPool({ threadCpuMs: () => 0, wallCeilingFactor: 2 }), HEAVY);
    expect(error.detail).toContain(`unfinished after ${2 * BUDGET_MS} ms`);
    // The stopped worker was replaced: the pool still validates.
    expect(await pool?.validate(CHEAP)).toMatchObject({ valid: true });
  }, 60_000);
});

describe('the policy budget without a CPU clock (systems other than Linux)', () => {
  it('counts wall time', async () => {
    const error = await refusal(startPool({ threadCpuMs: () => undefined }), COSTLY);
    expect(error.detail).toContain(`over ${BUDGET_MS} ms`);
    expect(error.detail).not.toContain('processor time');
  }, 60_000);
});

/** A CPU this process may run on (the last one it is allowed), or undefined off Linux. */
function lastAllowedCpu(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  return /Cpus_allowed_list:.*?(\d+)\s*$/m.exec(readFileSync('/proc/self/status', 'latin1'))?.[1];
}

/** Whether the scheduler tools that can starve one thread (util-linux) are at hand. */
function canStarve(): boolean {
  try {
    execFileSync('chrt', ['-p', String(process.pid)], { stdio: 'ignore' });
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return lastAllowedCpu() !== undefined;
  } catch {
    return false;
  }
}

describe.runIf(canStarve())('a worker starved of the CPU by the machine', () => {
  let hog: ChildProcess | undefined;
  afterEach(() => {
    hog?.kill('SIGKILL');
    hog = undefined;
  });

  it('still has a cheap policy accepted, however long it waits', async () => {
    // 1,000 rules: tens of milliseconds of CPU, far more than a starved worker gets in one turn
    // (a scheduler may give a task it wakes a slice of a few milliseconds at once; 200 rules,
    // about 5 ms, once fitted in it), so it waits for the CPU many times over.
    const text = rules.build(1000);
    const budgetMs = 400;
    const cpu = lastAllowedCpu() as string;
    let starving = false;
    let starved: { thread: string; cpuAtStart: number; at: number } | undefined;
    const p = startPool({
      budgetMs,
      wallCeilingFactor: 60_000 / budgetMs,
      threadCpuMs: (thread) => {
        const ms = threadCpuMs(thread);
        // Called as the job starts, before the worker has the document: from here on, the worker
        // runs on `cpu` only, and only when nothing else wants it (SCHED_IDLE).
        if (starving && !starved && ms !== undefined) {
          const tid = thread.split('/').at(-1) as string;
          execFileSync('taskset', ['-p', '-c', cpu, tid], { stdio: 'ignore' });
          execFileSync('chrt', ['--idle', '-p', '0', tid], { stdio: 'ignore' });
          starved = { thread, cpuAtStart: ms, at: performance.now() };
        }
        return ms;
      },
    });
    // Warm the worker with a generous budget: its first validations compile the engine's code.
    for (let i = 0; i < 3; i++) expect(await p.prepare(text, { budgetMs: 60_000 })).toMatchObject({ valid: true });

    // A loop at the normal priority on that CPU, which ends by itself should this process die.
    const loop = 'process.stdout.write("on"); const end = Date.now() + 120e3; while (Date.now() < end);';
    hog = spawn('taskset', ['-c', cpu, process.execPath, '-e', loop], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise((resolve) => hog?.stdout?.once('data', resolve));
    starving = true;

    const result = await p.validate(text);
    const done = performance.now();
    hog.kill('SIGKILL');

    expect(result).toMatchObject({ valid: true, errors: [] });
    if (!starved) throw new Error('no job read the CPU time of its worker');
    const wallMs = done - starved.at;
    // From the start of the job to now: all the validation cost, and a little more.
    const cpuMs = (threadCpuMs(starved.thread) as number) - starved.cpuAtStart;
    // The starvation took hold: past the budget in wall time (where a wall-clock budget refuses
    // the document), well under it in CPU time.
    expect(wallMs, `wall ${wallMs} ms, CPU ${cpuMs} ms`).toBeGreaterThan(budgetMs);
    expect(cpuMs, `wall ${wallMs} ms, CPU ${cpuMs} ms`).toBeLessThan(budgetMs / 2);
  }, 120_000);
});

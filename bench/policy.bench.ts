// Policy engine benchmark: `npm run bench:policy`.
//
// Measures validation of a 10,000-line policy, every device's peer list at 10,000 and 100,000
// devices, and one device's netmap at 10,000 devices, each next to a baseline measured in the
// same run (raw HuJSON parsing; naive pairwise evaluation) and to the target it must meet. The
// policy mixes `acls` with grants (one rule in five) and rules to autogroup:internet; the
// network has subnet routers with standbys and exit nodes, some offline.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseTree } from 'jsonc-parser';
import {
  type CompiledPolicy,
  canReach,
  compilePolicy,
  computePeerMaps,
  PeerMap,
  type PolicyDevice,
  type PolicyRole,
  type PolicyUser,
  validatePolicy,
} from '../packages/server/src/policy/index.js';
// The same seeded generator as the property tests, so every run measures the same networks.
import { prng } from '../packages/server/test/policy/generate.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Shape {
  users: number;
  admins: number;
  groups: number;
  groupSize: number;
  tags: number;
  hosts: number;
  rules: number;
  tests: number;
}

const PORTS = ['22', '80,443', '5432', '8000-8100', '443', '3000'];

/** A policy in the style people write: teams reach the tagged services they run. */
function policyText(shape: Shape, seed: number): string {
  const r = prng(seed);
  const login = (i: number) => `user${i}@example.com`;
  const members: number[][] = [];
  const lines: string[] = ['// Generated for the policy benchmark.', '{', '  "groups": {'];
  for (let g = 0; g < shape.groups; g++) {
    const m = [...new Set(Array.from({ length: shape.groupSize }, () => r.int(shape.users)))];
    members.push(m);
    lines.push(`    "group:team${g}": [${m.map((i) => `"${login(i)}"`).join(', ')}],`);
  }
  lines.push('  },', '  "tagOwners": {');
  for (let t = 0; t < shape.tags; t++)
    lines.push(`    "tag:svc${t}": ["group:team${t % shape.groups}", "autogroup:admin"],`);
  lines.push('    "tag:router": ["autogroup:admin"],', '    "tag:exit": ["autogroup:admin"],', '  },', '  "hosts": {');
  for (let h = 0; h < shape.hosts; h++) lines.push(`    "net${h}": "10.${h >> 8}.${h & 255}.0/24",`);
  lines.push('  },', '  "acls": [');
  lines.push('    // Members reach their own devices; admins reach everything.');
  lines.push('    { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] },');
  lines.push('    { "action": "accept", "src": ["autogroup:admin"], "dst": ["*:*"] },');
  const rules: Array<{ group: number; tag: number; port: string }> = [];
  const grants: string[] = [];
  for (let i = 0; i < shape.rules; i++) {
    const group = r.int(shape.groups);
    const tag = r.int(shape.tags);
    const port = r.pick(PORTS);
    rules.push({ group, tag, port });
    const dst = [`"tag:svc${tag}:${port}"`];
    if (r.next() < 0.3) dst.push(`"tag:svc${r.int(shape.tags)}:${r.pick(PORTS)}"`);
    if (r.next() < 0.1) dst.push(`"net${r.int(shape.hosts)}:${r.pick(PORTS)}"`);
    const src = [`"group:team${group}"`];
    if (r.next() < 0.2) src.push(`"tag:svc${r.int(shape.tags)}"`);
    if (i % 5 === 4) {
      // The same kind of rule, written as a grant.
      const ip = r.next() < 0.5 ? `"tcp:${port}"` : `"${port}"`;
      grants.push(`    { "src": [${src.join(', ')}], "dst": ["tag:svc${tag}"], "ip": [${ip}, "icmp:*"] },`);
      continue;
    }
    if (i % 50 === 0) dst.push('"autogroup:internet:*"');
    lines.push(`    // rule ${i}: team ${group} runs service ${tag}`);
    lines.push('    {');
    lines.push(`      "action": "accept", "src": [${src.join(', ')}],`);
    lines.push(`      "dst": [${dst.join(', ')}],`);
    lines.push('    },');
  }
  lines.push('  ],', '  "grants": [', ...grants, '  ],');
  lines.push('  "autoApprovers": { "routes": { "10.0.0.0/8": ["tag:router"] }, "exitNode": ["tag:exit"] },');
  lines.push('  "tests": [');
  for (let i = 0; i < shape.tests; i++) {
    const rule = rules[r.int(rules.length)];
    const m = members[rule.group];
    if (m.length === 0) continue;
    const port = rule.port.split(/[,-]/)[0];
    lines.push(
      `    { "src": "${login(m[0])}", "accept": ["tag:svc${rule.tag}:${port}"], "deny": ["tag:svc${rule.tag}:9"] },`,
    );
  }
  lines.push('  ],', '}');
  return lines.join('\n');
}

/** Users with a few devices each, tagged servers, and subnet routers. */
function network(devices: number, shape: Shape, seed: number): { users: PolicyUser[]; devices: PolicyDevice[] } {
  const r = prng(seed);
  const users: PolicyUser[] = Array.from({ length: shape.users }, (_, i) => ({
    login: `user${i}@example.com`,
    role: (i < shape.admins ? 'admin' : 'member') as PolicyRole,
  }));
  const out: PolicyDevice[] = [];
  let routers = 0;
  for (let i = 0; i < devices; i++) {
    const kind = r.next();
    const tags =
      kind < 0.3 ? [`tag:svc${r.int(shape.tags)}`] : kind < 0.302 ? ['tag:router'] : kind < 0.303 ? ['tag:exit'] : [];
    // Routers come in pairs serving the same /24, the second a standby (served, not primary,
    // offline); one exit node in four is offline.
    const router = tags[0] === 'tag:router' ? routers++ : -1;
    const pair = router >> 1;
    const routes =
      router >= 0
        ? [`10.${(pair >> 8) & 255}.${pair & 255}.0/24`]
        : tags[0] === 'tag:exit'
          ? ['0.0.0.0/0', '::/0']
          : [];
    const standby = router >= 0 ? router % 2 === 1 : routes.length > 0 && r.next() < 0.25;
    out.push({
      id: `dev_${i}`,
      user: `user${r.int(shape.users)}@example.com`,
      tags,
      addresses: [`100.${64 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`, `fd7a:115c:a1e0::${i.toString(16)}`],
      routes,
      ...(standby ? { primaryRoutes: [] } : {}),
      online: !standby,
    });
  }
  return { users, devices: out };
}

/** Wall time, and the CPU time of this process: on a shared machine the second shows the work. */
function time<T>(fn: () => T): { ms: number; cpuMs: number; value: T } {
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const value = fn();
  const used = process.cpuUsage(cpu);
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, cpuMs: (used.user + used.system) / 1000, value };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 3 : 1)} ms`);
const verdict = (ms: number, target: number) =>
  ms < target ? `ok (< ${fmt(target)})` : `OVER TARGET (${fmt(target)})`;
let failures = 0;
function report(name: string, ms: number, target: number, baseline: string): void {
  if (ms >= target) failures++;
  console.log(`${name.padEnd(44)} ${fmt(ms).padStart(10)}  ${verdict(ms, target)}\n${''.padEnd(46)}${baseline}`);
}

/** Naive pairwise visibility, the baseline: does either device reach the other (port 22, tcp)? */
function naivePeers(policy: CompiledPolicy, devices: PolicyDevice[], users: PolicyUser[], d: PolicyDevice): number {
  let n = 0;
  for (const o of devices) {
    if (o !== d && (canReach(policy, d, o, 22, 'tcp', users) || canReach(policy, o, d, 22, 'tcp', users))) n++;
  }
  return n;
}

function main(): void {
  console.log(`policy engine benchmark (node ${process.version})\n`);

  // 1. Validation of a 10,000-line policy.
  const big: Shape = {
    users: 5000,
    admins: 20,
    groups: 500,
    groupSize: 12,
    tags: 200,
    hosts: 100,
    rules: 2000,
    tests: 200,
  };
  const text = policyText(big, 1);
  const check = validatePolicy(text);
  if (!check.ok) throw new Error(`benchmark policy is invalid: ${JSON.stringify(check.errors.slice(0, 3))}`);
  const lineCount = text.split('\n').length;
  for (let i = 0; i < 3; i++) validatePolicy(text);
  const validateMs = median(Array.from({ length: 9 }, () => time(() => validatePolicy(text)).ms));
  const parseMs = median(
    Array.from({ length: 9 }, () => time(() => parseTree(text, [], { allowTrailingComma: true })).ms),
  );
  report(
    `validate ${lineCount} lines (2,000 rules, 500 groups, 200 tests)`,
    validateMs,
    100,
    `baseline: jsonc-parser parseTree alone ${fmt(parseMs)}; validate costs ${(validateMs / parseMs).toFixed(1)}x parsing`,
  );

  // 2. Every device's peer list.
  const shape: Shape = { ...big, rules: 1000, tests: 0 };
  const policy = compilePolicy(policyText(shape, 2));
  const sweep = (devices: number, seed: number, users = shape.users) => {
    const net = network(devices, { ...shape, users }, seed);
    gc();
    const before = process.memoryUsage().heapUsed;
    let entries = 0;
    let peak = 0;
    const { ms, cpuMs } = time(() => {
      const peers = computePeerMaps(policy, net.devices, net.users);
      net.devices.forEach((d, i) => {
        entries += peers(d.id).length;
        if (i % 500 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed - before);
      });
    });
    peak = Math.max(peak, process.memoryUsage().heapUsed - before);
    return { net, ms, cpuMs, entries, peakMb: peak / 2 ** 20 };
  };

  // The baseline is quadratic, so it is measured on 300 devices and scaled by (n / 300)².
  const small = network(300, shape, 3);
  const naiveSmall = time(() => {
    for (const d of small.devices) naivePeers(policy, small.devices, small.users, d);
  }).ms;
  const scale = (n: number) => naiveSmall * (n / 300) ** 2;
  const naive10k = scale(10_000);

  const s10 = sweep(10_000, 4);
  report(
    '10,000 devices, 1,000 rules: all peer lists',
    s10.ms,
    1000,
    `${s10.entries.toLocaleString('en')} peer entries, cpu ${fmt(s10.cpuMs)}, heap +${s10.peakMb.toFixed(0)} MB; baseline: pairwise canReach ` +
      `${fmt(naiveSmall)} at 300 devices → ~${fmt(naive10k)} at 10,000 (×${(naive10k / s10.ms).toFixed(0)})`,
  );
  // Users grow with the devices (two devices per user, as at 10,000): with 5,000 users the 20
  // admins alone would own 400 devices that see, and are seen by, all 100,000.
  const s100 = sweep(100_000, 5, 50_000);
  report(
    '100,000 devices (50,000 users), 1,000 rules: all peer lists',
    s100.ms,
    10_000,
    `${s100.entries.toLocaleString('en')} peer entries, cpu ${fmt(s100.cpuMs)}, heap +${s100.peakMb.toFixed(0)} MB (pairs would be ` +
      `${((100_000 * 100_000) / 1e9).toFixed(1)} billion); baseline: pairwise canReach ~${fmt(scale(100_000))} (×${(scale(100_000) / s100.ms).toFixed(0)})`,
  );

  // 3. One device's netmap at 10,000 devices.
  const { net } = s10;
  const r = prng(6);
  const map = new PeerMap(policy, net.devices, net.users);
  for (let i = 0; i < 200; i++) map.peers(r.pick(net.devices).id);
  const warm = Array.from({ length: 1000 }, () => time(() => map.peers(r.pick(net.devices).id)).ms);
  const cold = Array.from(
    { length: 20 },
    () => time(() => computePeerMaps(policy, net.devices, net.users)(r.pick(net.devices).id)).ms,
  );
  const naiveOne = median(
    Array.from({ length: 5 }, () => time(() => naivePeers(policy, net.devices, net.users, r.pick(net.devices))).ms),
  );
  report(
    'one netmap at 10,000 devices (p50, built map)',
    median(warm),
    10,
    `p99 ${fmt([...warm].sort((a, b) => a - b)[989])}; from scratch (build + one query) p50 ${fmt(median(cold))}; ` +
      `baseline: naive scan of every device ${fmt(naiveOne)} (×${(naiveOne / median(warm)).toFixed(0)})`,
  );
  if (failures > 0) {
    console.log(`\n${failures} figure(s) over target`);
    process.exitCode = 1;
  }
}

main();

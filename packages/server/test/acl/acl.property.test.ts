/**
 * PUT /v1/acl and POST /v1/acl/validate run one validation: on seeded random policies, valid
 * and broken, validate says valid exactly when PUT stores it, PUT reports exactly the errors
 * validate reports, and a refused PUT leaves the stored policy as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';
import { prng, randomNetwork } from '../policy/generate.js';
import { policyText, putPolicy, validate } from './helpers.js';

type Rng = ReturnType<typeof prng>;

/** Ways to break a policy: each makes one or more validation errors (or none, by chance). */
const BREAKERS: Array<(doc: any, r: Rng) => void> = [
  (doc) => doc.acls.push({ action: 'accept', src: ['group:missing'], dst: ['*:22'] }),
  (doc) => doc.acls.push({ action: 'deny', src: ['autogroup:member'], dst: ['*:22'] }),
  (doc) => doc.acls.push({ action: 'accept', src: ['*'], dst: ['*:*'] }),
  (doc, r) =>
    doc.acls.push({
      action: 'accept',
      src: ['autogroup:member'],
      dst: [r.pick(['10.0.0.0/33:22', 'h9:22', 'tag:nope:80', '10.1.2.3:99999'])],
    }),
  (doc) => {
    doc.acls[0].ports = ['22'];
  },
  (doc) => {
    doc.hosts = { ...doc.hosts, bad: '300.1.1.1' };
  },
  (doc) => {
    doc.autoApprovers = { routes: { '0.0.0.0/0': ['*'] } };
  },
  (doc) => {
    doc.postures = {};
  },
  (doc) => {
    doc.tests = [{ src: 'nobody@example.com', accept: ['tag:t0:22'] }];
  },
];

/** HuJSON with comments and trailing commas sprinkled in, or plain JSON. */
function render(doc: unknown, r: Rng): string {
  const text = JSON.stringify(doc, null, 2);
  if (r.chance(0.3)) return text;
  return `// generated policy\n${text
    .split('\n')
    .map((line) => (r.chance(0.1) ? `${line} // note` : line))
    .join('\n')
    .replace(/(["\]}0-9])\n(\s*[\]}])/g, (m, a, b) => (r.chance(0.5) ? `${a},\n${b}` : m))}\n`;
}

/** Syntax damage: a dropped bracket, a stray token, or a cut-off document. */
function damage(text: string, r: Rng): string {
  switch (r.int(3)) {
    case 0:
      return text.replace(']', '');
    case 1: {
      const at = text.indexOf('\n', Math.floor(text.length / 2));
      return `${text.slice(0, at)} @@ ${text.slice(at)}`;
    }
    default:
      return text.slice(0, Math.floor(text.length * 0.7));
  }
}

function generate(seed: number): string {
  const r = prng(seed);
  const doc: any = randomNetwork(seed, { users: 4, devices: 4, rules: 4 }).policy;
  if (r.chance(0.5)) for (let k = 1 + r.int(2); k > 0; k--) r.pick(BREAKERS)(doc, r);
  const text = render(doc, r);
  return r.chance(0.15) ? damage(text, r) : text;
}

describe('validate and PUT agree', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('on 80 seeded policies: valid ⇔ 200, invalid ⇔ 400 with the same errors and nothing changed', async () => {
    let accepted = 0;
    let refused = 0;
    for (let seed = 1; seed <= 80; seed++) {
      const text = generate(seed);
      const verdict = await validate(server, text);
      const before = await policyText(server);
      const res = await putPolicy(server, text);
      const body = await json(res);
      if (verdict.valid) {
        expect(res.status, `seed ${seed}: ${JSON.stringify(body)}`).toBe(200);
        expect(verdict.errors).toEqual([]);
        const after = await policyText(server);
        expect(after.text).toBe(text);
        expect(after.etag).toBe(res.headers.get('etag'));
        accepted++;
      } else {
        expect(res.status, `seed ${seed}`).toBe(400);
        expect(body.code).toBe('policy_invalid');
        expect(body.errors, `seed ${seed}`).toEqual(verdict.errors);
        expect(verdict.errors.length).toBeGreaterThan(0);
        expect(await policyText(server)).toEqual(before);
        refused++;
      }
    }
    // The generator must exercise both sides.
    expect(accepted).toBeGreaterThan(10);
    expect(refused).toBeGreaterThan(10);
  });
});

// Policies that grow along one dimension each: the shapes a 1 MiB document can take (many
// members, groups, rules, tests, hosts, long selectors, deep nesting, repeated sections, wide
// grants, many errors). Shared by the growth test (validation time must grow no faster than
// the text) and by `npm run bench -- policy-adversarial` (each shape at 1 MiB).

export interface Shape {
  name: string;
  /** The policy text with `n` of the growing thing. */
  build(n: number): string;
}

const login = (i: number) => `u${i}@example.com`;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const json = (value: unknown) => JSON.stringify(value);

export const SHAPES: Shape[] = [
  {
    name: 'group members',
    build: (n) => json({ groups: { 'group:big': range(n).map(login) } }),
  },
  {
    name: 'repeated members',
    build: (n) => json({ groups: { 'group:big': range(n).map((i) => login(i % 64)) } }),
  },
  {
    name: 'many groups in one rule',
    build: (n) => {
      const groups = Object.fromEntries(range(n).map((i) => [`group:g${i}`, [login(i), login(0)]]));
      return json({ groups, acls: [{ action: 'accept', src: Object.keys(groups), dst: ['u0@example.com:22'] }] });
    },
  },
  {
    name: 'groups naming groups',
    build: (n) => json({ groups: Object.fromEntries(range(n).map((i) => [`group:g${i}`, [`group:g${i + 1}`]])) }),
  },
  {
    name: 'logins in one rule',
    build: (n) => json({ acls: [{ action: 'accept', src: range(n).map(login), dst: [`${login(0)}:22`] }] }),
  },
  {
    name: 'destinations in one rule',
    build: (n) =>
      json({ acls: [{ action: 'accept', src: ['*'], dst: range(n).map((i) => `${login(i)}:${(i % 65535) + 1}`) }] }),
  },
  {
    name: 'ports of every device',
    build: (n) => json({ acls: [{ action: 'accept', src: ['*'], dst: range(n).map((i) => `*:${(i % 65000) + 1}`) }] }),
  },
  {
    name: 'rules',
    build: (n) =>
      json({
        acls: range(n).map((i) => ({ action: 'accept', src: [login(i)], dst: [`${login(i + 1)}:${(i % 65535) + 1}`] })),
      }),
  },
  {
    name: 'login named in many groups and rules',
    build: (n) => {
      const groups = Object.fromEntries(range(n).map((i) => [`group:g${i}`, [login(0)]]));
      const acls = range(n).map((i) => ({
        action: 'accept',
        src: [login(0)],
        dst: [`${login(1)}:${(i % 65535) + 1}`],
      }));
      return json({ groups, acls });
    },
  },
  {
    name: 'hosts',
    build: (n) => {
      const hosts = Object.fromEntries(
        range(n).map((i) => [`h${i}`, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`]),
      );
      return json({ hosts, acls: [{ action: 'accept', src: Object.keys(hosts), dst: ['h0:22'] }] });
    },
  },
  {
    name: 'tests',
    build: (n) =>
      json({
        acls: [{ action: 'accept', src: ['*'], dst: ['*:22'] }],
        tests: range(n).map((i) => ({ src: login(i), accept: [`${login(i + 1)}:22`], deny: [`${login(i)}:80`] })),
      }),
  },
  {
    name: 'test between two big groups',
    build: (n) => {
      const half = Math.ceil(n / 2);
      return json({
        groups: { 'group:a': range(half).map(login), 'group:b': range(half).map((i) => login(i + half)) },
        acls: [{ action: 'accept', src: ['group:a'], dst: ['group:b:22'] }],
        tests: [{ src: 'group:a', accept: ['group:b:22'], deny: ['group:b:80'] }],
      });
    },
  },
  {
    name: 'autogroup:member tests',
    build: (n) => {
      const half = Math.ceil(n / 2);
      return json({
        acls: [{ action: 'accept', src: range(half).map(login), dst: ['autogroup:self:22'] }],
        tests: range(half).map(() => ({ src: 'autogroup:member', deny: ['u0@example.com:80'] })),
      });
    },
  },
  {
    name: 'wide grant',
    build: (n) => {
      const half = Math.ceil(n / 2);
      const tagOwners = Object.fromEntries(range(half).map((i) => [`tag:t${i}`, []]));
      return json({
        tagOwners,
        grants: [
          {
            src: ['autogroup:member'],
            dst: Object.keys(tagOwners),
            ip: range(half).map((i) => `tcp:${(i % 65535) + 1}`),
          },
        ],
      });
    },
  },
  {
    name: 'auto-approved routes',
    build: (n) => {
      const routes = Object.fromEntries(
        range(n).map((i) => [`10.${(i >> 8) & 255}.${i & 255}.0/24`, ['autogroup:member']]),
      );
      return json({ autoApprovers: { routes } });
    },
  },
  {
    name: 'long selector',
    build: (n) =>
      json({
        acls: [{ action: 'accept', src: [`${'a'.repeat(n)}@${'b'.repeat(n)} `], dst: [`group:${'c'.repeat(n)}:22`] }],
      }),
  },
  {
    name: 'deep nesting',
    build: (n) => `{"acls": ${'['.repeat(n)}${']'.repeat(n)}}`,
  },
  {
    name: 'repeated sections',
    build: (n) =>
      `{${range(n)
        .map(() => '"tests":[]')
        .join(',')}}`,
  },
  {
    name: 'wrong types',
    build: (n) => json({ groups: { 'group:a': range(n).map(() => 1) } }),
  },
];

/** The first `n` at which the shape's text reaches `bytes` (found by doubling, then bisection). */
export function sizeFor(shape: Shape, bytes: number): number {
  let hi = 1;
  while (shape.build(hi).length < bytes) hi *= 2;
  let lo = hi / 2;
  while (hi - lo > Math.max(1, lo / 100)) {
    const mid = Math.floor((lo + hi) / 2);
    if (shape.build(mid).length < bytes) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * The layers of docs/ARCHITECTURE.md, held against the code: arrows point down (http/ and
 * control/ → modules/ → core/ → storage/; policy/ imported, importing nothing of the server
 * but the few helpers named below that import nothing themselves),
 * no import cycles, and domain folders import each other downwards only, but for the few
 * upward imports named below (and in docs/ARCHITECTURE.md) with their reasons.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cycles, importGraph, ROOT, relativeImportsLeavingPackage } from './import-graph.js';
import { tableWrites } from './table-writes.js';

const SERVER = 'packages/server/src/';

const graph = importGraph([
  'packages/server/src',
  'packages/contract/src',
  'packages/client/src',
  'packages/cli/src',
  'packages/console/src',
  'packages/console/browser',
  'packages/test-identity-provider/src',
]);

/** The part of the code a file belongs to: a folder of the server (a domain for modules/), or a package. */
function area(file: string): string {
  if (file.startsWith(SERVER)) {
    const [first, second] = file.slice(SERVER.length).split('/');
    if (second === undefined) return 'app';
    return first === 'modules' ? `modules/${second}` : first!;
  }
  return file.split('/')[1]!;
}

/** Domain folders, top to bottom: each may import the ones below it. */
const DOMAINS = [
  'tenants',
  'netmap',
  'events',
  'webhooks',
  'logs',
  'sso',
  'users',
  'devices',
  'oauth',
  'keys',
  'routes',
  'acl',
  'sessions',
  'network',
];

/** The upward imports between domain folders that are allowed, each with its reason (at most three). */
const UPWARD: { from: string; to: string; why: string }[] = [
  {
    from: 'acl',
    to: 'routes',
    why: 'a stored policy approves the pending routes its autoApprovers allow, in its transaction',
  },
  {
    from: 'routes',
    to: 'netmap',
    why: 'autoApprovers judge a route by its device as the policy sees it (policy inputs)',
  },
  { from: 'keys', to: 'users', why: 'an auth key names the user its devices will belong to' },
];

/**
 * Helpers of lib/ the policy engine may import: each imports nothing (checked below), so the
 * engine stays a library that needs nothing else of the server.
 */
const POLICY_MAY_USE = ['lib/nested-maps.ts'];

/**
 * Helpers of lib/ storage may import: generic mechanisms (batching calls made while one is in
 * flight) that import nothing but each other, so storage still reaches no domain code through
 * them (checked below).
 */
const STORAGE_MAY_USE = ['lib/write-batches.ts', 'lib/nested-maps.ts'];

/**
 * Each table and the one folder that writes it (docs/ARCHITECTURE.md has the same list). Every
 * other folder that needs a row changed calls the owner's repository or service.
 */
const OWNERS: Record<string, string> = {
  networks: 'modules/network',
  read_stamps: 'modules/network',
  netmap_changes: 'modules/network',
  presence_changes: 'modules/network',
  users: 'modules/users',
  sessions: 'modules/sessions',
  login_links: 'modules/sessions',
  sso_configs: 'modules/sso',
  sso_logins: 'modules/sso',
  keys: 'modules/keys',
  oauth_clients: 'modules/oauth',
  oauth_tokens: 'modules/oauth',
  policies: 'modules/acl',
  devices: 'modules/devices',
  device_tags: 'modules/devices',
  device_list_stamps: 'modules/devices',
  device_record_stamps: 'modules/devices',
  machine_logins: 'modules/devices',
  ssh_checks: 'modules/devices',
  routes: 'modules/routes',
  connections: 'modules/logs',
  events: 'core',
  announcements: 'modules/events',
  webhooks: 'modules/webhooks',
  webhook_deliveries: 'modules/webhooks',
  audit_log: 'core',
  rate_limit_buckets: 'edge',
  rate_limit_slots: 'edge',
  server_secrets: 'lib',
};

/**
 * Files whose writes do not name their table in the call, and the tables they write. The
 * bulk insert helper writes whatever its caller names (the caller's call is read instead).
 */
const NAMED_BY_CALLER: Record<string, string[]> = {
  'core/change-records.ts': ['audit_log', 'events'],
  'modules/network/epoch-log.ts': ['netmap_changes', 'presence_changes'],
  'storage/bulk-insert.ts': [],
};

/**
 * Migrations are left out: they are schema history, frozen once released (010 carries its own
 * copy of the code it needs), and the triggers they define are the database's own bookkeeping.
 */
const writes = tableWrites(['packages/server/src']).filter((w) => !w.file.startsWith(`${SERVER}storage/migrations/`));

/** The folder a server file belongs to, as the owners above name it. */
function folderOf(file: string): string {
  const [first, second] = file.slice(SERVER.length).split('/');
  return first === 'modules' || first === 'control' || first === 'http' ? `${first}/${second}` : first!;
}

/** Imports from files of `from` areas to files of `to` areas. */
function importsBetween(from: (area: string) => boolean, to: (area: string) => boolean): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    if (!from(area(file))) continue;
    for (const target of targets) if (to(area(target))) found.push(`${file} → ${target}`);
  }
  return found.sort();
}

const is =
  (...areas: string[]) =>
  (a: string) =>
    areas.some((name) => a === name || a.startsWith(`${name}/`));
const server = (a: string) =>
  ['app', 'http', 'control', 'edge', 'core', 'lib', 'policy', 'storage'].includes(a) || a.startsWith('modules/');

describe('the layers of the code', () => {
  it('reads a graph of the whole server', () => {
    // A guard against a reader that silently finds nothing (a moved folder, a changed pattern).
    expect(graph.size).toBeGreaterThan(200);
    expect(importsBetween(is('app'), is('http')).length).toBeGreaterThan(10);
  });

  it('reads every face, device protocol and the request boundary', () => {
    // The rules below hold these by their top folder (http, control, edge): a folder that
    // moved out of them would escape every rule without a test failing.
    const folders = [
      'http/routes/',
      'http/tailscale-api/',
      'control/native/',
      'control/tailscale/',
      'control/derp/',
      'edge/',
    ];
    const files = [...graph.keys()];
    expect(folders.filter((folder) => !files.some((file) => file.startsWith(SERVER + folder)))).toEqual([]);
  });

  it('has a README in every folder of modules/, control/ and http/, saying what it owns and may import', () => {
    const missing: string[] = [];
    const walk = (folder: string) => {
      if (!existsSync(join(ROOT, SERVER, folder, 'README.md'))) missing.push(folder);
      for (const entry of readdirSync(join(ROOT, SERVER, folder), { withFileTypes: true }))
        if (entry.isDirectory()) walk(`${folder}/${entry.name}`);
    };
    for (const top of ['modules', 'control', 'http']) walk(top);
    expect(missing).toEqual([]);
  });

  it('has no import cycles', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('keeps services and repositories free of HTTP and of device protocols', () => {
    expect(importsBetween(is('modules'), is('http', 'control', 'edge', 'app'))).toEqual([]);
  });

  it('keeps the device protocols and the admin API apart', () => {
    expect(importsBetween(is('control'), is('http'))).toEqual([]);
    expect(importsBetween(is('http'), is('control'))).toEqual([]);
  });

  it('keeps the request boundary below both faces and above the domains', () => {
    expect(importsBetween(is('edge'), is('http', 'control', 'modules', 'app'))).toEqual([]);
  });

  it('keeps the core below the domains and free of HTTP', () => {
    expect(importsBetween(is('core'), is('http', 'control', 'edge', 'modules', 'app'))).toEqual([]);
  });

  it('keeps storage and migrations free of domain code', () => {
    const helper = (target: string) => STORAGE_MAY_USE.some((file) => target === SERVER + file);
    const found = importsBetween(is('storage'), (a) => server(a) && a !== 'storage');
    expect(found.filter((i) => !helper(i.split(' → ')[1]!))).toEqual([]);
    for (const file of STORAGE_MAY_USE) {
      const imports = [...(graph.get(SERVER + file) ?? [])];
      expect(imports.filter((target) => !STORAGE_MAY_USE.some((allowed) => target === SERVER + allowed))).toEqual([]);
    }
  });

  it('keeps the policy engine pure', () => {
    const helper = (target: string) => POLICY_MAY_USE.some((file) => target === SERVER + file);
    const found = importsBetween(is('policy'), (a) => server(a) && a !== 'policy');
    expect(found.filter((i) => !helper(i.split(' → ')[1]!))).toEqual([]);
    // What it may use instead of writing its own copy imports nothing at all.
    for (const file of POLICY_MAY_USE) expect(readFileSync(join(ROOT, SERVER, file), 'utf8')).not.toMatch(/^import /m);
  });

  it('keeps the contract and the client free of the server', () => {
    expect(importsBetween(is('contract'), (a) => a !== 'contract')).toEqual([]);
    expect(importsBetween(is('client'), (a) => server(a))).toEqual([]);
  });

  it('reaches another package by its name, never by a relative path into its files', () => {
    expect(relativeImportsLeavingPackage()).toEqual([]);
  });

  it('lets the console reach the server only through its public entry', () => {
    const inside = importsBetween(is('console'), server).filter((i) => !i.endsWith(`→ ${SERVER}index.ts`));
    expect(inside).toEqual([]);
  });

  it('lists every domain folder in its order', () => {
    const folders = new Set([...graph.keys()].map(area).filter((a) => a.startsWith('modules/')));
    expect([...folders].map((a) => a.slice('modules/'.length)).sort()).toEqual([...DOMAINS].sort());
  });

  it('imports between domain folders downwards, but for the named exceptions', () => {
    expect(UPWARD.length).toBeLessThanOrEqual(3);
    const level = (a: string) => DOMAINS.indexOf(a.slice('modules/'.length));
    const upward = new Map<string, string[]>();
    for (const found of importsBetween(is('modules'), is('modules'))) {
      const [file, target] = found.split(' → ') as [string, string];
      const [from, to] = [area(file), area(target)];
      if (from === to || level(from) < level(to)) continue;
      const pair = `${from.slice('modules/'.length)} → ${to.slice('modules/'.length)}`;
      upward.set(pair, [...(upward.get(pair) ?? []), found]);
    }
    const allowed = UPWARD.map(({ from, to }) => `${from} → ${to}`);
    const unexpected = [...upward].filter(([pair]) => !allowed.includes(pair)).flatMap(([, imports]) => imports);
    expect(unexpected).toEqual([]);
    // An exception no longer used comes off the list (and off docs/ARCHITECTURE.md).
    expect(allowed.filter((pair) => !upward.has(pair))).toEqual([]);
  });
});

describe('the tables and the folders that own them', () => {
  it('reads the writes of the whole server', () => {
    // A guard against a reader that silently finds nothing (a renamed call, a changed pattern).
    expect(new Set(writes.map((w) => w.table)).size).toBeGreaterThan(20);
    expect(writes.some((w) => w.table === 'connections' && w.file.endsWith('connections.repository.ts'))).toBe(true);
  });

  it('names an owner for every table of the schema', () => {
    const schema = ['schema.ts', 'schema-events.ts', 'schema-netmap.ts']
      .map((file) => readFileSync(join(ROOT, SERVER, 'storage', file), 'utf8'))
      .join('\n');
    const tables = [...schema.matchAll(/interface Database \{([^}]*)\}/g)].flatMap(([, body]) =>
      [...body!.matchAll(/^\s*(\w+): \w+Table;/gm)].map(([, table]) => table!),
    );
    expect(tables.length).toBeGreaterThan(20);
    expect(tables.filter((table) => !(table in OWNERS))).toEqual([]);
    expect(Object.keys(OWNERS).filter((table) => !tables.includes(table))).toEqual([]);
  });

  it('writes each table from the folder that owns it, and no other', () => {
    const strays = writes
      .filter((w) => w.table !== undefined && OWNERS[w.table] !== folderOf(w.file))
      .map((w) => `${w.file}:${w.line} writes ${w.table} (owned by ${OWNERS[w.table!] ?? 'nobody'})`);
    expect(strays).toEqual([]);
  });

  it('knows which tables the writes that do not name theirs reach', () => {
    const unnamed = writes
      .filter((w) => w.table === undefined)
      .map((w) => w.file.slice(SERVER.length))
      .filter((file) => !(file in NAMED_BY_CALLER));
    expect(unnamed).toEqual([]);
    for (const [file, tables] of Object.entries(NAMED_BY_CALLER)) {
      for (const table of tables) expect(OWNERS[table]).toBe(folderOf(SERVER + file));
    }
  });
});

/**
 * The import graph of the TypeScript packages, read from their sources: every `import … from`,
 * `export … from`, side-effect import and `import('…')` whose target is a file of this
 * repository (a relative path, or a workspace package by its name and `exports`). Type-only
 * imports count: a cycle of types is still a cycle a reader has to follow.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..', '..', '..');

/** File → the files it imports, both as paths relative to the repository root. */
export type ImportGraph = Map<string, Set<string>>;

const SOURCE = /\.(ts|tsx|mts)$/;
const STATIC =
  /^(?:import|export)\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\}|\w+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+\w+))?)\s+from\s+['"]([^'"]+)['"]/gm;
const SIDE_EFFECT = /^import\s+['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The TypeScript sources under `dir` (absolute), leaving out dependencies, builds and declarations. */
export function sourceFiles(dir: string, into: string[] = []): string[] {
  if (!existsSync(dir)) return into;
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) sourceFiles(path, into);
    else if (SOURCE.test(entry) && !entry.endsWith('.d.ts')) into.push(path);
  }
  return into;
}

type Exported = string | { [condition: string]: Exported };

/** The file an `exports` entry names: its TypeScript source (`@warren/source`), else its import. */
function exportedFile(entry: Exported | undefined): string | undefined {
  if (entry === undefined || typeof entry === 'string') return entry;
  for (const condition of ['@warren/source', 'import', 'default']) {
    const file = exportedFile(entry[condition]);
    if (file) return file;
  }
  return undefined;
}

/** `@warren/<name>[/sub]` → the source file its package.json `exports` names. */
function workspaceTarget(spec: string): string | undefined {
  const match = /^@warren\/([^/]+)(\/.*)?$/.exec(spec);
  if (!match) return undefined;
  const dir = join(ROOT, 'packages', match[1]!);
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) return undefined;
  const { exports, main } = JSON.parse(readFileSync(manifest, 'utf8')) as {
    exports?: Record<string, Exported>;
    main?: string;
  };
  const key = match[2] ? `.${match[2]}` : '.';
  const path = exportedFile(exports?.[key]) ?? (key === '.' ? main : undefined);
  return path ? resolve(dir, path) : undefined;
}

function fileOf(path: string): string | undefined {
  const candidates = [
    path,
    path.replace(/\.m?js$/, '.ts'),
    path.replace(/\.js$/, '.tsx'),
    `${path}.ts`,
    join(path, 'index.ts'),
  ];
  return candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
}

/** What a file imports, as written: relative paths and package names. */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [STATIC, SIDE_EFFECT, DYNAMIC].flatMap((pattern) => [...text.matchAll(pattern)].map(([, spec]) => spec!));
}

/** The package a file belongs to: `packages/<name>`, or `.` for the repository's own files. */
function packageOf(path: string): string {
  const [top, name] = relative(ROOT, path).split('/');
  return top === 'packages' && name !== undefined ? `packages/${name}` : '.';
}

/**
 * Relative imports that leave the package of the file that makes them (`../../server/test/…`),
 * across every source file of the workspace packages: another package is reached by its name
 * and its `exports`, never by a path into its files.
 */
export function relativeImportsLeavingPackage(): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(join(ROOT, 'packages'))) {
    for (const spec of specifiers(file)) {
      if (spec.startsWith('.') && packageOf(resolve(dirname(file), spec)) !== packageOf(file))
        found.push(`${relative(ROOT, file)} → ${spec}`);
    }
  }
  return found.sort();
}

/** The graph of every source file under `dirs` (relative to the repository root). */
export function importGraph(dirs: readonly string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of dirs.flatMap((dir) => sourceFiles(join(ROOT, dir)))) {
    const targets = new Set<string>();
    for (const spec of specifiers(file)) {
      const path = spec.startsWith('.') ? resolve(dirname(file), spec) : workspaceTarget(spec);
      const target = path && fileOf(path);
      if (target && target !== file) targets.add(relative(ROOT, target));
    }
    graph.set(relative(ROOT, file), targets);
  }
  return graph;
}

/** Every import cycle, each as the files of one strongly connected component (Tarjan). */
export function cycles(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

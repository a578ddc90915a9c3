/** When a build is older than its sources: shared by the package build and the console's build. */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The latest modification time under `path` (a file or a folder, walked whole); 0 when missing. */
export function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), stat.mtimeMs);
}

/** True when `built` is missing or older than any of `sources`. */
export function isStale(built, sources) {
  const builtAt = existsSync(built) ? statSync(built).mtimeMs : 0;
  return builtAt <= Math.max(...sources.map(newest));
}

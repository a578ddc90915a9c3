/**
 * Where a sign-in may send the browser afterwards: only a path of this server. Anything a
 * browser could read as another origin — `//evil`, `/\evil`, `https://evil`, a scheme, a
 * control character — becomes `/`, so a sign-in link can never be turned into an open redirect.
 */
const MAX_LENGTH = 2048;

export function safeReturnTo(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_LENGTH) return '/';
  if (!value.startsWith('/')) return '/';
  // Browsers treat `\` as `/` and drop tabs and newlines inside URLs.
  if (value.includes('\\') || [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) {
    return '/';
  }
  if (value.startsWith('//')) return '/';
  // Resolved against a placeholder origin it must stay on that origin.
  try {
    const base = 'http://warren.invalid';
    const resolved = new URL(value, base);
    if (resolved.origin !== base) return '/';
    return `${resolved.pathname}${resolved.search}${resolved.hash}`;
  } catch {
    return '/';
  }
}

/**
 * A browser, as far as sign-in needs one: it keeps cookies per origin and follows redirects
 * one at a time, so a test can stop at any hop (the callback URL) and replay or alter it.
 */
export class Browser {
  private readonly jars = new Map<string, Map<string, string>>();

  cookie(origin: string, name: string): string | undefined {
    return this.jars.get(origin)?.get(name);
  }

  setCookie(origin: string, name: string, value: string): void {
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    jar.set(name, value);
    this.jars.set(origin, jar);
  }

  /** One request, no redirect followed. */
  async get(url: string, init: { method?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const { origin } = new URL(url);
    const jar = this.jars.get(origin);
    const headers: Record<string, string> = { ...init.headers };
    if (jar?.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await fetch(url, { method: init.method ?? 'GET', headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '';
      const cookies = this.jars.get(origin) ?? new Map<string, string>();
      if (expired) cookies.delete(name);
      else cookies.set(name, value);
      this.jars.set(origin, cookies);
    }
    return response;
  }

  /** Follows redirects until `stop` says so (or a non-redirect); returns the last response and its URL. */
  async follow(
    url: string,
    stop: (next: URL) => boolean = () => false,
  ): Promise<{ response: Response; url: string; next?: string }> {
    let current = url;
    for (let hop = 0; hop < 20; hop++) {
      const response = await this.get(current);
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) return { response, url: current };
      const next = new URL(location, current);
      if (stop(next)) return { response, url: current, next: next.href };
      current = next.href;
    }
    throw new Error(`too many redirects from ${url}`);
  }
}

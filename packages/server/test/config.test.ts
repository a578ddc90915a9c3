/** `warren serve`'s flags and environment: a flag wins over its variable, which wins over the default. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_DB, serveConfig } from '../src/config.js';

const ENV = { WARREN_HOST: '0.0.0.0', WARREN_PORT: '9000', WARREN_DB: 'sqlite:/srv/warren/env.db' };

describe('serveConfig', () => {
  it('defaults: 127.0.0.1:8080 and SQLite at ./data/warren.db', () => {
    expect(serveConfig({}, {})).toMatchObject({ host: '127.0.0.1', port: 8080, db: DEFAULT_DB });
    expect(DEFAULT_DB).toBe('sqlite:./data/warren.db');
  });

  it('the environment sets what no flag sets', () => {
    expect(serveConfig({}, ENV)).toMatchObject({ host: '0.0.0.0', port: 9000, db: 'sqlite:/srv/warren/env.db' });
    expect(serveConfig({ port: '9100' }, ENV)).toMatchObject({ host: '0.0.0.0', port: 9100 });
  });

  it('a flag wins over its variable', () => {
    expect(serveConfig({ host: '::1', port: '0', db: 'sqlite::memory:' }, ENV)).toMatchObject({
      host: '::1',
      port: 0,
      db: 'sqlite::memory:',
    });
  });

  it('single sign-on over plain http only when WARREN_SSO_ALLOW_HTTP=true', () => {
    expect(serveConfig({}, {}).ssoAllowHttp).toBe(false);
    expect(serveConfig({}, { WARREN_SSO_ALLOW_HTTP: '1' }).ssoAllowHttp).toBe(false);
    expect(serveConfig({}, { WARREN_SSO_ALLOW_HTTP: 'true' }).ssoAllowHttp).toBe(true);
  });

  it('a bad value is refused, naming where it came from', () => {
    expect(() => serveConfig({}, { WARREN_PORT: 'http' })).toThrow(/invalid port "http" \(--port or WARREN_PORT/);
    expect(() => serveConfig({}, { WARREN_DB: 'mysql://db/warren' })).toThrow(/unsupported database URL/);
    expect(() => serveConfig({ db: 'postgres://db/warren' }, { WARREN_DB: 'mysql://x' })).not.toThrow();
  });
});

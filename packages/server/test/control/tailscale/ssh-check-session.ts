/** A person signed in to `server`'s console through a one-time link, calling its SSH check endpoints. */
import { expect } from 'vitest';
import { SESSION_COOKIE } from '../../../src/http/session-cookie.js';
import { createLoginLink } from '../../../src/modules/sessions/login-links.js';
import { json, type TestServer } from '../../harness.js';
import { Browser } from '../../people/browser.js';

export async function sshCheckSession(server: TestServer, userId: string) {
  const link = await createLoginLink(server.database.storage.db, server.networkId, userId, server.clock.now());
  const browser = new Browser();
  const res = await browser.get(`${server.url}/auth/link?token=${link}`);
  expect(res.status).toBe(303);
  const csrf = res.headers.get('x-csrf-token')!;
  const cookie = `${SESSION_COOKIE}=${browser.cookie(server.url, SESSION_COOKIE)}`;
  const api = (url: string) => `${server.url}/auth${new URL(url).pathname}`;
  return {
    view: async (url: string) => json(await fetch(api(url), { headers: { cookie } })),
    approve: (url: string) =>
      fetch(`${api(url)}/approve`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', 'x-csrf-token': csrf },
        body: '{}',
      }),
  };
}

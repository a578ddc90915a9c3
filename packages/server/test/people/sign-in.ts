/** People for session tests: a user of a role, signed in through a one-time link. */
import { expect } from 'vitest';
import { createLoginLink } from '../../src/modules/sessions/login-links.js';
import { json, type TestServer } from '../harness.js';
import { Browser } from './browser.js';

export async function addUser(server: TestServer, loginName: string, role: string): Promise<string> {
  const res = await server.call('POST', '/v1/users', { body: { loginName, role } });
  expect(res.status).toBe(201);
  return (await json(res)).id;
}

/** Signs a user in through a one-time link; returns the browser and its CSRF token. */
export async function signIn(server: TestServer, userId: string): Promise<{ browser: Browser; csrf: string }> {
  const token = await createLoginLink(server.database.storage.db, server.networkId, userId, server.clock.now());
  const browser = new Browser();
  const res = await browser.get(`${server.url}/auth/link?token=${token}`);
  expect(res.status, await res.clone().text()).toBe(303);
  return { browser, csrf: res.headers.get('x-csrf-token')! };
}

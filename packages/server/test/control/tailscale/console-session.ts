/**
 * A person signed in to a server's console through a one-time link, calling the endpoints a
 * console page behind a link the client prints calls: a machine login's (`/register/{token}`)
 * or an SSH check's (`/ssh-check/{token}`).
 */
import { expect } from 'vitest';
import { SESSION_COOKIE } from '../../../src/http/session-cookie.js';
import { insertMachineLogin } from '../../../src/modules/devices/login/machine-logins.repository.js';
import { createLoginLink } from '../../../src/modules/sessions/login-links.js';
import { json, type TestServer } from '../../harness.js';
import { Browser } from '../../people/browser.js';

export interface ConsolePerson {
  view(url: string): Promise<Response>;
  /** `csrf` null: without the session's CSRF token. */
  approve(url: string, body?: Record<string, unknown>, csrf?: string | null): Promise<Response>;
}

export async function consoleSession(server: TestServer, userId: string): Promise<ConsolePerson> {
  const link = await createLoginLink(server.database.storage.db, server.networkId, userId, server.clock.now());
  const browser = new Browser();
  const res = await browser.get(`${server.url}/auth/link?token=${link}`);
  expect(res.status).toBe(303);
  const csrf = res.headers.get('x-csrf-token')!;
  const cookie = `${SESSION_COOKIE}=${browser.cookie(server.url, SESSION_COOKIE)}`;
  const api = (url: string) => `${server.url}/auth${new URL(url).pathname}`;
  return {
    view: (url) => fetch(api(url), { headers: { cookie } }),
    approve: (url, body = {}, token = csrf) =>
      fetch(`${api(url)}/approve`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', ...(token !== null && { 'x-csrf-token': token }) },
        body: JSON.stringify(body),
      }),
  };
}

/** The same person on an SSH check's page, its answer read as JSON. */
export async function sshCheckSession(server: TestServer, userId: string) {
  const person = await consoleSession(server, userId);
  return {
    view: async (url: string) => json(await person.view(url)),
    approve: (url: string) => person.approve(url),
  };
}

/** A machine login left pending for 15 minutes from now, as a client without a key starts one. */
export async function pendingMachineLogin(server: TestServer, tokenHash: string): Promise<void> {
  const now = server.clock.now();
  await insertMachineLogin(server.database.storage.db, {
    token_hash: tokenHash,
    machine_key: `mkey:${tokenHash}`,
    node_key: `nodekey:${tokenHash}`,
    hostname: 'stranger',
    os: 'linux',
    client_version: null,
    request_tags: '[]',
    ephemeral: 0,
    old_node_key: null,
    created_at: now,
    expires_at: now + 15 * 60_000,
  });
}

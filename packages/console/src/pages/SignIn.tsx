/**
 * Sign-in: single sign-on by network name, or the one-time link an administrator made. A link
 * or a single sign-on that cannot sign in sends the browser here with `?problem=` (GET
 * /auth/link, /auth/login, /auth/callback; server http/sign-in-problems.ts), said in words.
 */
import { type FormEvent, useState } from 'react';
import { useLocation } from '../router.ts';
import { useTitle } from '../ui.tsx';

const LOGIN_COMMAND = 'warren console login --network NAME --user EMAIL';

/** What went wrong with a sign-in link, and what to do next. */
const PROBLEMS: Record<string, { title: string; advice: string }> = {
  link_invalid: {
    title: 'This sign-in link no longer works.',
    advice:
      'A sign-in link works once and for 10 minutes. It was already used, it expired, or it was copied incompletely. Ask an administrator for a new link.',
  },
  sso_required: {
    title: 'This network signs in only through single sign-on.',
    advice: 'Sign-in links are turned off here. Enter the network name below to sign in with your identity provider.',
  },
  user_inactive: {
    title: 'This account cannot sign in.',
    advice: 'The user of this link was suspended or removed. Ask an owner or admin of the network to restore it.',
  },
  sso_network: {
    title: 'No network of that name signs in with single sign-on.',
    advice:
      'Check the name (several networks may share one: then use the network id), or ask an administrator for a sign-in link.',
  },
  sso_restart: {
    title: 'This sign-in cannot be finished.',
    advice:
      'It took longer than 10 minutes, was already used, or was started in another browser. Sign in again from here.',
  },
  sso_failed: {
    title: 'Your identity provider did not sign you in.',
    advice:
      'It refused, could not be reached, or did not confirm your email address. Try again, and if it keeps failing, ask an administrator to check the single sign-on settings.',
  },
  sso_denied: {
    title: 'Your identity provider signed you in, but this network has no place for you.',
    advice:
      'Your email address is not a user of this network, its domain is not allowed to join, or the plan has no seat left. Ask an owner or admin to add you.',
  },
  sso_inactive: {
    title: 'This account cannot sign in.',
    advice: 'Your user in this network is suspended. Ask an owner or admin of the network to restore it.',
  },
};

/** `returnTo`: the page that asked for a sign-in (a device's login URL), where sign-in leads back to. */
export function SignIn({ returnTo }: { returnTo?: string } = {}) {
  useTitle('Sign in');
  const { query } = useLocation();
  const problem = PROBLEMS[query.get('problem') ?? ''];
  const [network, setNetwork] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const back = returnTo ? `&returnTo=${encodeURIComponent(returnTo)}` : '';
    window.location.assign(`/auth/login?network=${encodeURIComponent(network.trim())}${back}`);
  };
  return (
    <main id="main" className="signin">
      <h1>Sign in to Warren</h1>
      {returnTo && (
        <p role="status">
          {returnTo.startsWith('/ssh-check/')
            ? 'An SSH session is waiting for you to confirm it.'
            : 'A device is asking to log in.'}{' '}
          Sign in first; you come back to it afterwards (with a one-time link, open it in this browser).
        </p>
      )}
      {problem && (
        <div className="notice error" role="alert">
          <p>
            <strong>{problem.title}</strong>
          </p>
          <p>{problem.advice}</p>
        </div>
      )}
      <form onSubmit={submit}>
        <label htmlFor="network">Network</label>
        <input id="network" name="network" required value={network} onChange={(e) => setNetwork(e.target.value)} />
        <button type="submit">Sign in with single sign-on</button>
      </form>
      <p>
        Without single sign-on, ask an administrator for a one-time sign-in link:
        <br />
        <code>{LOGIN_COMMAND}</code>
      </p>
    </main>
  );
}

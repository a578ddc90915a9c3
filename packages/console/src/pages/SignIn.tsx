/** Sign-in: single sign-on by network name, or the one-time link an administrator made. */
import { type FormEvent, useState } from 'react';

export function SignIn() {
  const [network, setNetwork] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    window.location.assign(`/auth/login?network=${encodeURIComponent(network.trim())}`);
  };
  return (
    <main id="main" className="signin">
      <h1>Sign in to Warren</h1>
      <form onSubmit={submit}>
        <label htmlFor="network">Network</label>
        <input id="network" name="network" required value={network} onChange={(e) => setNetwork(e.target.value)} />
        <button type="submit">Sign in with single sign-on</button>
      </form>
      <p>
        Without single sign-on, ask an administrator for a one-time sign-in link:
        <br />
        <code>warren console login --network NAME --user EMAIL</code>
      </p>
    </main>
  );
}

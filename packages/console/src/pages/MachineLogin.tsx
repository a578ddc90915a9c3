/**
 * A Tailscale client's login URL (`tailscale up` without an auth key prints it): the machine
 * it names — name, OS, client version, keys, the tags it asks for — and a button that makes it
 * the signed-in person's device (or, for roles that may make auth keys for others, another
 * user's). The client waiting in the terminal continues by itself once approved. A used or
 * expired URL says so, and what to do.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { MachineLoginBody } from '@warren/contract';
import { type FormEvent, useState } from 'react';
import { api, messageOf } from '../api.ts';
import { Link, LinkFailure, Loading, PageHeader, Time, useTitle } from '../ui.tsx';

/** A key as people compare it: its first 16 hex digits in groups of four. */
function fingerprint(key: string): string {
  const hex = key.slice(key.indexOf(':') + 1, key.indexOf(':') + 17);
  return hex.match(/.{1,4}/g)?.join(' ') ?? hex;
}

export function MachineLogin({ token, me }: { token: string; me: { id: string; loginName: string } | null }) {
  useTitle('Log in a device');
  const path = `/auth/register/${encodeURIComponent(token)}`;
  const queries = useQueryClient();
  const login = useQuery({
    queryKey: ['machine-login', token],
    queryFn: () => api.http.json<MachineLoginBody>('GET', path),
    retry: false,
  });
  const [owner, setOwner] = useState('');
  const approve = useMutation({
    mutationFn: () =>
      api.http.json<{ deviceId: string }>('POST', `${path}/approve`, { body: owner ? { user: owner } : {} }),
    onSettled: () => queries.invalidateQueries({ queryKey: ['machine-login', token] }),
  });

  if (login.isPending) return <Loading what="the device asking to log in" />;
  if (login.isError) {
    return (
      <section>
        <PageHeader title="Log in a device" />
        <LinkFailure
          error={login.error}
          retry={() => login.refetch()}
          link="login URL"
          renew="Run tailscale up on the device again for a new one."
        />
      </section>
    );
  }
  const m = login.data;
  const done = approve.data?.deviceId ?? m.deviceId;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    approve.mutate();
  };
  return (
    <section>
      <PageHeader title="Log in a device" />
      <Outcome view={m} deviceId={done} />
      <dl className="facts">
        <dt>Name</dt>
        <dd>{m.hostname}</dd>
        <dt>OS</dt>
        <dd>{m.os}</dd>
        <dt>Client version</dt>
        <dd>{m.clientVersion ?? '—'}</dd>
        <dt>Node key</dt>
        <dd>
          <code title={m.nodeKey}>{fingerprint(m.nodeKey)}</code>
        </dd>
        <dt>Machine key</dt>
        <dd>
          <code title={m.machineKey}>{fingerprint(m.machineKey)}</code>
        </dd>
        {m.requestedTags.length > 0 && (
          <>
            <dt>Tags asked for</dt>
            <dd>
              {m.requestedTags.map((t) => (
                <span key={t} className="pill">
                  {t}
                </span>
              ))}
            </dd>
          </>
        )}
        {m.renews && (
          <>
            <dt>Logs in again</dt>
            <dd>
              <Link to={`/devices/${encodeURIComponent(m.renews.id)}`}>{m.renews.name}</Link>
            </dd>
          </>
        )}
        {m.ephemeral && (
          <>
            <dt>Ephemeral</dt>
            <dd>removed 10 minutes after it goes offline</dd>
          </>
        )}
        <dt>URL expires</dt>
        <dd>
          <Time iso={m.expires} />
        </dd>
      </dl>
      {m.state === 'pending' && (
        <form onSubmit={submit}>
          <p>
            Check that the node key matches what the device shows (<code>tailscale status --json</code>, Self's
            PublicKey) before you approve it.
          </p>
          {m.mayChooseUser && <OwnerChoice me={me} value={owner} onChange={setOwner} />}
          <button type="submit" disabled={approve.isPending}>
            Log in {m.hostname}
          </button>
          {approve.isError && (
            <p className="error" role="alert">
              {messageOf(approve.error)}
            </p>
          )}
        </form>
      )}
    </section>
  );
}

function Outcome({ view, deviceId }: { view: MachineLoginBody; deviceId: string | null }) {
  if (view.state === 'approved') {
    return (
      <div className="notice" role="status">
        <p>
          <strong>{view.hostname} is logged in.</strong> The device continues by itself; this URL cannot be used again.
        </p>
        {deviceId && (
          <p>
            <Link to={`/devices/${encodeURIComponent(deviceId)}`}>Open the device</Link>
          </p>
        )}
      </div>
    );
  }
  if (view.state === 'expired') {
    return (
      <div className="notice error" role="alert">
        <p>
          <strong>This login URL expired.</strong>
        </p>
        <p>A login URL works once and for 15 minutes. Run tailscale up on the device again for a new one.</p>
      </div>
    );
  }
  if (view.state === 'refused') {
    return (
      <div className="notice error" role="alert">
        <p>
          <strong>This login was refused.</strong>
        </p>
        <p>{view.refusal ?? 'The device was told why.'} Run tailscale up on the device again to try anew.</p>
      </div>
    );
  }
  return null;
}

/** For roles that may make auth keys for others: whose device it becomes (default: one's own). */
function OwnerChoice(props: {
  me: { id: string; loginName: string } | null;
  value: string;
  onChange: (v: string) => void;
}) {
  const users = useQuery({ queryKey: ['users'], queryFn: () => api.users.list() });
  const active = (users.data ?? []).filter((u) => u.status === 'active' && u.id !== props.me?.id);
  return (
    <p>
      <label htmlFor="owner">Log in as</label>{' '}
      <select id="owner" value={props.value} onChange={(e) => props.onChange(e.target.value)}>
        <option value="">{props.me ? `${props.me.loginName} (you)` : 'yourself'}</option>
        {active.map((u) => (
          <option key={u.id} value={u.id}>
            {u.loginName}
          </option>
        ))}
      </select>
    </p>
  );
}

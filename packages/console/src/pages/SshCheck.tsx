/**
 * A Tailscale SSH connection's check URL (an `ssh` rule with `action: "check"` prints it in the
 * terminal of the person connecting): the device it comes from, the device and local user it
 * logs in as, and a button that confirms it for the source device's owner. The connection,
 * held meanwhile, continues by itself once confirmed. Anyone else signed in sees who may.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { SshCheckBody } from '@warren/contract';
import type { FormEvent } from 'react';
import { api, messageOf } from '../api.ts';
import { LinkFailure, Loading, PageHeader, Time, useTitle } from '../ui.tsx';

function period(seconds: number): string {
  if (seconds === 0) return 'this connection only';
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  return `${Math.round(seconds / 60)} min`;
}

export function SshCheck({ token }: { token: string }) {
  useTitle('Confirm an SSH session');
  const path = `/auth/ssh-check/${encodeURIComponent(token)}`;
  const queries = useQueryClient();
  const check = useQuery({
    queryKey: ['ssh-check', token],
    queryFn: () => api.http.json<SshCheckBody>('GET', path),
    retry: false,
  });
  const approve = useMutation({
    mutationFn: () => api.http.json<SshCheckBody>('POST', `${path}/approve`, { body: {} }),
    onSettled: () => queries.invalidateQueries({ queryKey: ['ssh-check', token] }),
  });

  if (check.isPending) return <Loading what="the SSH session" />;
  if (check.isError) {
    return (
      <section>
        <PageHeader title="Confirm an SSH session" />
        <LinkFailure
          error={check.error}
          retry={() => check.refetch()}
          link="SSH check URL"
          renew="Connect again for a new one."
        />
      </section>
    );
  }
  const c = check.data;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    approve.mutate();
  };
  return (
    <section>
      <PageHeader title="Confirm an SSH session" />
      {c.state === 'approved' && (
        <div className="notice" role="status">
          <p>
            <strong>The SSH session is confirmed.</strong> The connection continues by itself; this URL cannot be used
            again.
          </p>
        </div>
      )}
      {c.state === 'expired' && (
        <div className="notice error" role="alert">
          <p>
            <strong>This SSH check expired.</strong>
          </p>
          <p>A check URL works once and for 10 minutes. Connect again for a new one.</p>
        </div>
      )}
      <dl className="facts">
        <dt>From</dt>
        <dd>{c.source.name}</dd>
        <dt>To</dt>
        <dd>{c.destination.name}</dd>
        <dt>As user</dt>
        <dd>{c.localUser}</dd>
        <dt>Confirmation holds</dt>
        <dd>{period(c.periodSeconds)}</dd>
        <dt>URL expires</dt>
        <dd>
          <Time iso={c.expires} />
        </dd>
      </dl>
      {c.state === 'pending' &&
        (c.mayApprove ? (
          <form onSubmit={submit}>
            <p>Confirm only a connection you are making yourself, now.</p>
            <button type="submit" disabled={approve.isPending}>
              Confirm SSH to {c.destination.name}
            </button>
            {approve.isError && (
              <p className="error" role="alert">
                {messageOf(approve.error)}
              </p>
            )}
          </form>
        ) : (
          <p className="notice error" role="alert">
            Only {c.source.owner ?? 'the owner of the source device'}, signed in, can confirm this session.
          </p>
        ))}
    </section>
  );
}

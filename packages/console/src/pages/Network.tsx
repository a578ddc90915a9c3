/** Network: plan, limits and usage; device, DNS and relay settings; single sign-on. */

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { FormEvent } from 'react';
import { api, type Can } from '../api.ts';
import { CopyButton, Failure, Loading, PageHeader, Time } from '../ui.tsx';
import { DeviceSettings } from './NetworkDevices.tsx';
import { DnsSettings } from './NetworkDns.tsx';
import { RelaySettings } from './NetworkRelays.tsx';
import { words } from './settings-form.tsx';

export function Network({ can }: { can: Can }) {
  const network = useQuery({ queryKey: ['network'], queryFn: () => api.network.get() });
  if (network.isPending) return <Loading what="the network" />;
  if (network.isError) return <Failure error={network.error} retry={() => network.refetch()} />;
  const n = network.data;
  return (
    <section>
      <PageHeader title={`Network ${n.name}`} />
      <dl className="facts">
        <dt>Id</dt>
        <dd>
          <code>{n.id}</code>
        </dd>
        <dt>Plan</dt>
        <dd>{n.plan}</dd>
        <dt>Log retention</dt>
        <dd>{n.limits.logRetentionDays} days</dd>
      </dl>
      <h2>Usage</h2>
      <Usage label="Users" used={n.usage.users} limit={n.limits.users} />
      <Usage label="Devices" used={n.usage.devices} limit={n.limits.devices} />
      <DeviceSettings network={n} editable={can.all} />
      <DnsSettings network={n} editable={can.all} />
      <RelaySettings network={n} editable={can.all} />
      <Sso editable={can.all} configured={n.sso.configured} redirectUri={n.sso.redirectUri} />
    </section>
  );
}

function Usage({ label, used, limit }: { label: string; used: number; limit: number | null }) {
  return (
    <div className="usage">
      <span id={`usage-${label}`}>
        {label}: {used} of {limit ?? 'unlimited'}
      </span>
      {limit !== null && (
        <meter aria-labelledby={`usage-${label}`} min={0} max={limit} value={used} high={limit * 0.9} />
      )}
    </div>
  );
}

function Sso({
  editable,
  configured,
  redirectUri,
}: {
  editable: boolean;
  configured: boolean;
  redirectUri: string | null;
}) {
  const queries = useQueryClient();
  // Asked only when set up: GET /v1/network/sso answers 404 otherwise, an error in the console.
  const sso = useQuery({ queryKey: ['sso'], queryFn: () => api.network.sso(), retry: false, enabled: configured });
  const save = useMutation({
    mutationFn: (input: Parameters<typeof api.network.setSso>[0]) => api.network.setSso(input),
    onSuccess: (data) => {
      queries.setQueryData(['sso'], data);
      return queries.invalidateQueries({ queryKey: ['network'] });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    save.mutate({
      issuer: String(form.get('issuer')).trim(),
      clientId: String(form.get('clientId')).trim(),
      clientSecret: String(form.get('clientSecret')),
      allowedDomains: words(form.get('allowedDomains')),
      enforce: form.get('enforce') === 'on',
    });
  };
  return (
    <>
      <h2>Single sign-on</h2>
      {redirectUri ? (
        <p>
          Redirect URI to register with your identity provider: <code data-testid="redirect-uri">{redirectUri}</code>{' '}
          <CopyButton text={redirectUri} label="Copy the redirect URI" />
        </p>
      ) : (
        <p>
          Single sign-on needs the server's public URL: start <code>warren serve</code> with{' '}
          <code>WARREN_PUBLIC_URL</code> set to the address browsers reach it at.
        </p>
      )}
      {!configured ? (
        <p>Single sign-on is not set up: people sign in with one-time links.</p>
      ) : sso.isPending ? (
        <Loading what="single sign-on" />
      ) : sso.isError ? (
        <Failure error={sso.error} />
      ) : (
        <dl className="facts">
          <dt>Issuer</dt>
          <dd>{sso.data.issuer}</dd>
          <dt>Client id</dt>
          <dd>{sso.data.clientId}</dd>
          <dt>Allowed domains</dt>
          <dd>{sso.data.allowedDomains.join(', ') || 'any'}</dd>
          <dt>Only single sign-on</dt>
          <dd>{sso.data.enforce ? 'yes' : 'no'}</dd>
          <dt>Updated</dt>
          <dd>
            <Time iso={sso.data.updated} />
          </dd>
        </dl>
      )}
      {editable && (!configured || sso.data) && (
        <form className="card" onSubmit={submit} aria-labelledby="sso-form">
          <h3 id="sso-form">{sso.data ? 'Change' : 'Set up'} single sign-on</h3>
          <label>
            Issuer URL
            <input name="issuer" type="url" required defaultValue={sso.data?.issuer} />
          </label>
          <label>
            Client id
            <input name="clientId" required defaultValue={sso.data?.clientId} />
          </label>
          <label>
            Client secret
            <input name="clientSecret" type="password" required autoComplete="off" />
          </label>
          <label>
            Allowed email domains
            <input name="allowedDomains" defaultValue={sso.data?.allowedDomains.join(' ')} />
          </label>
          <label>
            <input name="enforce" type="checkbox" defaultChecked={sso.data?.enforce} /> Sign in only through single
            sign-on
          </label>
          <button type="submit" className="primary" disabled={save.isPending}>
            Save single sign-on
          </button>
          {save.isError && <Failure error={save.error} />}
        </form>
      )}
    </>
  );
}

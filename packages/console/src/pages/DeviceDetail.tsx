/** One device: addresses (copy), routes (approve/disable), tags (offered from tagOwners), delete. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Can } from '../api.ts';
import { navigate } from '../router.ts';
import { CopyButton, Failure, Link, Loading, PageHeader, Time } from '../ui.tsx';
import { Pending } from './Devices.tsx';
import { useDeviceChanges } from './device-changes.ts';
import { RouteActions } from './RouteActions.tsx';

export function DeviceDetail({ id, can }: { id: string; can: Can }) {
  const queries = useQueryClient();
  const device = useQuery({ queryKey: ['device', id], queryFn: () => api.devices.get(id) });
  useDeviceChanges(can.read);
  const remove = useMutation({
    mutationFn: () => api.devices.delete(id),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['devices'] });
      navigate('/devices');
    },
  });
  if (device.isPending) return <Loading what="the device" />;
  if (device.isError) return <Failure error={device.error} retry={() => device.refetch()} />;
  const d = device.data;
  const confirmDelete = () => {
    if (window.confirm(`Delete ${d.name}? It loses access until it is enrolled again.`)) remove.mutate();
  };
  return (
    <section>
      <p>
        <Link to="/devices">← Devices</Link>
      </p>
      <PageHeader title={d.name}>
        {(can.write('devices') || can.ownDevicesOnly) && (
          <button type="button" className="danger" onClick={confirmDelete} disabled={remove.isPending}>
            Delete device
          </button>
        )}
      </PageHeader>
      {remove.isError && <Failure error={remove.error} />}
      <dl className="facts">
        <dt>Id</dt>
        <dd>
          <code>{d.id}</code> <CopyButton text={d.id} label="Copy the device id" />
        </dd>
        <dt>State</dt>
        <dd>
          <span className={d.online ? 'pill on' : 'pill'}>{d.online ? 'online' : 'offline'}</span>
        </dd>
        <dt>Last seen</dt>
        <dd>
          <Time iso={d.lastSeen} />
        </dd>
        <dt>User</dt>
        <dd>{d.user?.loginName ?? '—'}</dd>
        <dt>Hostname</dt>
        <dd>{d.hostname}</dd>
        <dt>OS</dt>
        <dd>{d.os || '—'}</dd>
        <dt>Client version</dt>
        <dd>{d.clientVersion ?? '—'}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={d.created} />
        </dd>
        <dt>Key expiry</dt>
        <dd>
          {d.keyExpiry ? (
            <Expiry iso={d.keyExpiry} />
          ) : d.keyExpiryDisabled ? (
            'never (expiry disabled for this device)'
          ) : (
            'never'
          )}
        </dd>
        {!d.authorized && (
          <>
            <dt>Approval</dt>
            <dd>
              <Pending id={d.id} name={d.name} approvable={can.write('devices')} />
            </dd>
          </>
        )}
        {d.ephemeral && (
          <>
            <dt>Ephemeral</dt>
            <dd>removed 10 minutes after it goes offline</dd>
          </>
        )}
      </dl>
      <h2>Addresses</h2>
      <ul className="plain">
        {(d.addresses ?? []).map((address) => (
          <li key={address}>
            <code>{address}</code> <CopyButton text={address} label={`Copy ${address}`} />
          </li>
        ))}
      </ul>
      <h2>Routes</h2>
      {(d.routes ?? []).length === 0 ? (
        <p>This device advertises no routes.</p>
      ) : (
        <ul className="plain">
          {(d.routes ?? []).map((route) => (
            <li key={route.id} className="route-line">
              <code>{route.prefix}</code> <span className="pill">{route.state}</span>
              {route.exitNode && <span className="pill">exit node</span>}
              {route.primary && <span className="pill on">primary</span>}{' '}
              {can.write('devices') && <RouteActions id={route.id} state={route.state} name={route.prefix} />}
            </li>
          ))}
        </ul>
      )}
      <h2>Tags</h2>
      <Tags id={id} tags={d.tags} editable={can.write('devices')} />
    </section>
  );
}

/** When the device's key expires, with the exact time beside the relative one. */
function Expiry({ iso }: { iso: string }) {
  const past = Date.parse(iso) <= Date.now();
  return (
    <span className={past ? 'error' : undefined}>
      {past ? 'expired ' : ''}
      <Time iso={iso} /> <span className="subtle inline-subtle">({new Date(iso).toLocaleString()})</span>
    </span>
  );
}

function Tags({ id, tags, editable }: { id: string; tags: string[]; editable: boolean }) {
  const queries = useQueryClient();
  const [draft, setDraft] = useState('');
  const policy = useQuery({ queryKey: ['policy'], queryFn: () => api.acl.get(), enabled: editable });
  const offered = Object.keys((policy.data?.policy as { tagOwners?: Record<string, unknown> })?.tagOwners ?? {});
  const save = useMutation({
    mutationFn: (next: string[]) => api.devices.setTags(id, next),
    onSuccess: (device) => {
      queries.setQueryData(['device', id], device);
      return queries.invalidateQueries({ queryKey: ['devices'] });
    },
  });
  const add = (event: FormEvent) => {
    event.preventDefault();
    const tag = draft.trim();
    if (tag && !tags.includes(tag)) save.mutate([...tags, tag]);
    setDraft('');
  };
  return (
    <div>
      <ul className="plain tags">
        {tags.length === 0 && <li>No tags: the device acts as its user.</li>}
        {tags.map((tag) => (
          <li key={tag}>
            <span className="pill">{tag}</span>
            {editable && (
              <button
                type="button"
                aria-label={`Remove ${tag}`}
                onClick={() => save.mutate(tags.filter((t) => t !== tag))}
              >
                ×
              </button>
            )}
          </li>
        ))}
      </ul>
      {editable && (
        <form onSubmit={add} className="inline">
          <label htmlFor="new-tag">Add a tag</label>
          <input
            id="new-tag"
            list="tag-owners"
            value={draft}
            placeholder="tag:server"
            onChange={(e) => setDraft(e.target.value)}
          />
          <datalist id="tag-owners">
            {offered.map((tag) => (
              <option key={tag} value={tag} />
            ))}
          </datalist>
          <button type="submit" disabled={save.isPending}>
            Add
          </button>
        </form>
      )}
      {save.isError && <Failure error={save.error} />}
    </div>
  );
}

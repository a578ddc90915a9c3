/**
 * Devices: the server pages the list (50 in name order) and searches it by name or address;
 * the filters (search, user, tag, online) live in the URL. The page is fetched again only when
 * the events stream says a device changed (useDeviceChanges), not on a timer, so an idle list
 * of 10,000 devices costs one small events call every few seconds.
 */

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { DeviceBody } from '@warren/contract';
import { useEffect, useState } from 'react';
import { api, type Can, messageOf } from '../api.ts';
import { setQuery, useLocation } from '../router.ts';
import { Empty, Failure, Link, Loading, PageHeader, TableWrap, Time } from '../ui.tsx';
import { useDeviceChanges } from './device-changes.ts';

const PAGE = 50;

export function Devices({ can }: { can: Can }) {
  const { query } = useLocation();
  const q = query.get('q') ?? '';
  const user = query.get('user') ?? '';
  const tag = query.get('tag') ?? '';
  const online = query.get('online') ?? '';
  const filter = {
    q: q || undefined,
    user: user || undefined,
    tag: tag || undefined,
    online: online ? online === 'true' : undefined,
  };
  const filterKey = JSON.stringify(filter);
  // The cursors of the pages before this one: Previous goes back one, a new filter starts over.
  const [cursors, setCursors] = useState<string[]>([]);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the filter's text is what changes
  useEffect(() => {
    setCursors([]);
    setCursor(undefined);
  }, [filterKey]);
  const devices = useQuery({
    queryKey: ['devices', filter, cursor],
    queryFn: () => api.devices.page({ ...filter, fields: 'all', limit: PAGE, cursor }),
    placeholderData: (previous) => previous,
  });
  useDeviceChanges(can.read);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const queries = useQueryClient();
  const remove = useMutation({
    mutationFn: async (ids: string[]) => {
      for (const id of ids) await api.devices.delete(id);
    },
    onSettled: () => {
      setSelected(new Set());
      return queries.invalidateQueries({ queryKey: ['devices'] });
    },
  });

  const shown = devices.data?.devices ?? [];
  const total = devices.data?.total ?? 0;
  const first = cursors.length * PAGE;
  const mayDelete = can.write('devices') || can.ownDevicesOnly;
  const toggle = (id: string) => {
    const next = new Set(selected);
    if (!next.delete(id)) next.add(id);
    setSelected(next);
  };
  const deleteSelected = () => {
    if (window.confirm(`Delete ${selected.size} device(s)? They lose access until enrolled again.`)) {
      remove.mutate([...selected]);
    }
  };
  const filtered = Boolean(q || user || tag || online);

  return (
    <section aria-labelledby="devices-title">
      <PageHeader title="Devices">
        {mayDelete && selected.size > 0 && (
          <button type="button" className="danger" onClick={deleteSelected} disabled={remove.isPending}>
            Delete {selected.size} selected
          </button>
        )}
      </PageHeader>
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter devices">
        <label>
          Search
          <input
            name="q"
            type="search"
            defaultValue={q}
            placeholder="name or address"
            onChange={(e) => setQuery({ q: e.target.value.trim() })}
          />
        </label>
        {!can.ownDevicesOnly && (
          <label>
            User
            <input
              name="user"
              defaultValue={user}
              placeholder="login name or id"
              onChange={(e) => setQuery({ user: e.target.value.trim() })}
            />
          </label>
        )}
        <label>
          Tag
          <input
            name="tag"
            defaultValue={tag}
            placeholder="tag:server"
            onChange={(e) => setQuery({ tag: e.target.value.trim() })}
          />
        </label>
        <label>
          Online
          <select name="online" value={online} onChange={(e) => setQuery({ online: e.target.value })}>
            <option value="">any</option>
            <option value="true">online</option>
            <option value="false">offline</option>
          </select>
        </label>
      </form>
      {remove.isError && <Failure error={remove.error} />}
      {devices.isPending ? (
        <Loading what="devices" />
      ) : devices.isError ? (
        <Failure error={devices.error} retry={() => devices.refetch()} />
      ) : total === 0 ? (
        <Empty>
          {filtered ? <p>No device matches these filters. Clear a filter to see more.</p> : <NoDevices can={can} />}
        </Empty>
      ) : (
        <>
          <p className="count" aria-live="polite">
            {total} device{total === 1 ? '' : 's'}
            {total > PAGE && ` · showing ${first + 1}–${first + shown.length}`}
          </p>
          <TableWrap label="Devices">
            <table className="devices">
              <thead>
                <tr>
                  {mayDelete && (
                    <th scope="col">
                      <input
                        type="checkbox"
                        aria-label="Select all devices on this page"
                        checked={shown.length > 0 && shown.every((d) => selected.has(d.id))}
                        onChange={(e) =>
                          setSelected(e.target.checked ? new Set(shown.map((d) => d.id)) : new Set<string>())
                        }
                      />
                    </th>
                  )}
                  <th scope="col">Name</th>
                  <th scope="col">Address</th>
                  <th scope="col">Owner</th>
                  <th scope="col">OS</th>
                  <th scope="col">Version</th>
                  <th scope="col">Last seen</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((device) => (
                  <Row
                    key={device.id}
                    device={device}
                    selectable={mayDelete}
                    approvable={can.write('devices')}
                    selected={selected}
                    toggle={toggle}
                  />
                ))}
              </tbody>
            </table>
          </TableWrap>
          {(cursors.length > 0 || devices.data.hasMore) && (
            <nav className="pager" aria-label="Pages of devices">
              <button
                type="button"
                disabled={cursors.length === 0}
                onClick={() => {
                  setCursor(cursors.length > 1 ? cursors[cursors.length - 2] : undefined);
                  setCursors(cursors.slice(0, -1));
                }}
              >
                Previous
              </button>
              <span>
                Page {cursors.length + 1} of {Math.ceil(total / PAGE)}
              </span>
              <button
                type="button"
                disabled={!devices.data.nextCursor}
                onClick={() => {
                  const next = devices.data.nextCursor ?? undefined;
                  if (!next) return;
                  setCursors([...cursors, next]);
                  setCursor(next);
                }}
              >
                Next
              </button>
            </nav>
          )}
        </>
      )}
      {remove.isPending && <p role="status">Deleting…</p>}
      {remove.isError && <p className="error">{messageOf(remove.error)}</p>}
    </section>
  );
}

/** What someone with no devices can do next, by what their role allows. */
function NoDevices({ can }: { can: Can }) {
  if (can.write('keys')) {
    return (
      <p>
        No devices yet. Create an auth key on the <Link to="/keys">Keys</Link> page and enroll a device with it.
      </p>
    );
  }
  if (can.ownDevicesOnly) {
    return (
      <p>
        You have no devices yet. To add one, ask an administrator of the network for an auth key and enroll the device
        with it; it then appears here.
      </p>
    );
  }
  return <p>No devices yet. They appear here once someone enrolls one.</p>;
}

function Row(props: {
  device: DeviceBody;
  selectable: boolean;
  approvable: boolean;
  selected: Set<string>;
  toggle: (id: string) => void;
}) {
  const { device } = props;
  const ipv4 = device.addresses?.find((a) => a.includes('.'));
  return (
    <tr>
      {props.selectable && (
        <td>
          <input
            type="checkbox"
            aria-label={`Select ${device.name}`}
            checked={props.selected.has(device.id)}
            onChange={() => props.toggle(device.id)}
          />
        </td>
      )}
      <td className="device-name">
        {/* The state sits with the name: the first thing seen, also on a phone. */}
        <span className={device.online ? 'dot on' : 'dot'} aria-hidden="true" />
        <Link to={`/devices/${encodeURIComponent(device.id)}`}>{device.name}</Link>{' '}
        <span className={device.online ? 'state-label on' : 'state-label'}>{device.online ? 'online' : 'offline'}</span>
        {!device.authorized && <Pending id={device.id} name={device.name} approvable={props.approvable} />}
      </td>
      <td>{ipv4 ? <code>{ipv4}</code> : '—'}</td>
      <td>
        {/* A tagged device is identified by its tags, not by the user who enrolled it (as in the CLI). */}
        {device.tags.length > 0
          ? device.tags.map((t) => (
              <span key={t} className="pill">
                {t}
              </span>
            ))
          : (device.user?.loginName ?? '—')}
      </td>
      <td>{device.os || '—'}</td>
      <td>{device.clientVersion ?? '—'}</td>
      <td>
        <Time iso={device.lastSeen} />
      </td>
    </tr>
  );
}

/** A device waiting for approval (network setting deviceApproval): said so, with Approve for those who may. */
export function Pending({ id, name, approvable }: { id: string; name: string; approvable: boolean }) {
  const queries = useQueryClient();
  const approve = useMutation({
    mutationFn: () => api.devices.approve(id),
    onSuccess: () =>
      Promise.all([
        queries.invalidateQueries({ queryKey: ['devices'] }),
        queries.invalidateQueries({ queryKey: ['device', id] }),
      ]),
  });
  return (
    <>
      {' '}
      <span className="pill">waiting for approval</span>
      {approvable && (
        <>
          {' '}
          <button
            type="button"
            onClick={() => approve.mutate()}
            disabled={approve.isPending}
            aria-label={`Approve ${name}`}
          >
            Approve
          </button>
        </>
      )}
      {approve.isError && (
        <span className="error" role="alert">
          {' '}
          {messageOf(approve.error)}
        </span>
      )}
    </>
  );
}

/**
 * Devices: the list filters (user, tag, online) live in the URL; online state is polled; the
 * table is paged (100 rows) so 10,000 devices render as fast as 100.
 */

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { DeviceBody } from '@warren/contract';
import { useState } from 'react';
import { api, type Can, messageOf } from '../api.ts';
import { setQuery, useLocation } from '../router.ts';
import { Empty, Failure, Link, Loading, PageHeader, TableWrap, Time } from '../ui.tsx';

const PAGE = 100;
const POLL_MS = 10_000;

export function Devices({ can }: { can: Can }) {
  const { query } = useLocation();
  const user = query.get('user') ?? '';
  const tag = query.get('tag') ?? '';
  const online = query.get('online') ?? '';
  const page = Math.max(0, Number(query.get('page') ?? '0') || 0);
  const filter = { user: user || undefined, tag: tag || undefined, online: online ? online === 'true' : undefined };
  const devices = useQuery({
    queryKey: ['devices', filter],
    queryFn: () => api.devices.list(filter),
    refetchInterval: POLL_MS,
  });
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

  const rows = devices.data ?? [];
  const pages = Math.max(1, Math.ceil(rows.length / PAGE));
  const shown = rows.slice(page * PAGE, page * PAGE + PAGE);
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
        {!can.ownDevicesOnly && (
          <label>
            User
            <input
              name="user"
              defaultValue={user}
              placeholder="login name or id"
              onChange={(e) => setQuery({ user: e.target.value.trim(), page: undefined })}
            />
          </label>
        )}
        <label>
          Tag
          <input
            name="tag"
            defaultValue={tag}
            placeholder="tag:server"
            onChange={(e) => setQuery({ tag: e.target.value.trim(), page: undefined })}
          />
        </label>
        <label>
          Online
          <select name="online" value={online} onChange={(e) => setQuery({ online: e.target.value, page: undefined })}>
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
      ) : rows.length === 0 ? (
        <Empty>
          {user || tag || online ? (
            <p>No device matches these filters. Clear a filter to see more.</p>
          ) : (
            <p>
              No devices yet. Create an auth key on the <Link to="/keys">Keys</Link> page and enroll a device with it.
            </p>
          )}
        </Empty>
      ) : (
        <>
          <p className="count" aria-live="polite">
            {rows.length} device{rows.length === 1 ? '' : 's'}
          </p>
          <TableWrap label="Devices">
            <table>
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
                  <th scope="col">User</th>
                  <th scope="col">Tags</th>
                  <th scope="col">State</th>
                  <th scope="col">Last seen</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((device) => (
                  <Row key={device.id} device={device} selectable={mayDelete} selected={selected} toggle={toggle} />
                ))}
              </tbody>
            </table>
          </TableWrap>
          {pages > 1 && (
            <nav className="pager" aria-label="Pages of devices">
              <button type="button" disabled={page === 0} onClick={() => setQuery({ page: String(page - 1) })}>
                Previous
              </button>
              <span>
                Page {page + 1} of {pages}
              </span>
              <button type="button" disabled={page >= pages - 1} onClick={() => setQuery({ page: String(page + 1) })}>
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

function Row(props: { device: DeviceBody; selectable: boolean; selected: Set<string>; toggle: (id: string) => void }) {
  const { device } = props;
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
      <td>
        <Link to={`/devices/${encodeURIComponent(device.id)}`}>{device.name}</Link>
      </td>
      <td>{device.user?.loginName ?? '—'}</td>
      <td>{device.tags.join(', ') || '—'}</td>
      <td>
        <span className={device.online ? 'pill on' : 'pill'}>{device.online ? 'online' : 'offline'}</span>
      </td>
      <td>
        <Time iso={device.lastSeen} />
      </td>
    </tr>
  );
}

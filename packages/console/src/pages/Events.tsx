/** Events: what changed in the network, newest first, filtered by type (`device.*`). */
import { useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { setQuery, useLocation } from '../router.ts';
import { Empty, Failure, Loading, PageHeader, TableWrap, Time } from '../ui.tsx';

export function Events() {
  const { query } = useLocation();
  const type = query.get('type') ?? '';
  const events = useQuery({
    queryKey: ['events', type],
    queryFn: () => api.events.list({ since: '24h', limit: 500, type: type ? type.split(/[\s,]+/) : undefined }),
    refetchInterval: 5000,
  });
  return (
    <section>
      <PageHeader title="Events" />
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter events">
        <label>
          Types
          <input
            defaultValue={type}
            placeholder="device.* key.created"
            onChange={(e) => setQuery({ type: e.target.value.trim() })}
          />
        </label>
      </form>
      {events.isPending ? (
        <Loading what="events" />
      ) : events.isError ? (
        <Failure error={events.error} retry={() => events.refetch()} />
      ) : events.data.entries.length === 0 ? (
        <Empty>
          <p>
            No events in the last 24 hours{type ? ' of these types' : ''}. Changes to devices, keys and the policy
            appear here.
          </p>
        </Empty>
      ) : (
        <TableWrap label="Events">
          <table>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Type</th>
                <th scope="col">By</th>
              </tr>
            </thead>
            <tbody>
              {[...events.data.entries].reverse().map((e) => (
                <tr key={e.id}>
                  <td>
                    <Time iso={e.time} />
                  </td>
                  <td>
                    <code>{e.type}</code>
                  </td>
                  <td>{e.actor.name ?? e.actor.type}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

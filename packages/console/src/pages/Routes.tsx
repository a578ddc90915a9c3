/** Routes: pending approvals first; HA primaries and exit nodes marked. */
import { useQuery } from '@tanstack/react-query';
import { api, type Can } from '../api.ts';
import { Empty, Failure, Link, Loading, PageHeader, TableWrap } from '../ui.tsx';
import { RouteActions } from './RouteActions.tsx';

const ORDER: Record<string, number> = { pending: 0, disabled: 1, approved: 2 };

export function RoutesPage({ can }: { can: Can }) {
  const routes = useQuery({ queryKey: ['routes'], queryFn: () => api.routes.list(), refetchInterval: 15_000 });
  if (routes.isPending) return <Loading what="routes" />;
  if (routes.isError) return <Failure error={routes.error} retry={() => routes.refetch()} />;
  const sorted = [...routes.data].sort((a, b) => (ORDER[a.state] ?? 3) - (ORDER[b.state] ?? 3));
  const pending = sorted.filter((r) => r.state === 'pending').length;
  return (
    <section>
      <PageHeader title="Routes" />
      {sorted.length === 0 ? (
        <Empty>
          <p>No routes. A device advertises subnet routes or an exit node when it is enrolled; they appear here.</p>
        </Empty>
      ) : (
        <>
          <p>{pending > 0 ? `${pending} route(s) wait for approval.` : 'No route waits for approval.'}</p>
          <TableWrap label="Routes">
            <table>
              <caption className="sr-only">Routes</caption>
              <thead>
                <tr>
                  <th scope="col">Prefix</th>
                  <th scope="col">Device</th>
                  <th scope="col">State</th>
                  <th scope="col">Role</th>
                  {can.write('devices') && <th scope="col">Actions</th>}
                </tr>
              </thead>
              <tbody>
                {sorted.map((route) => (
                  <tr key={route.id}>
                    <td>
                      <code>{route.prefix}</code>
                    </td>
                    <td>
                      <Link to={`/devices/${encodeURIComponent(route.deviceId)}`}>{route.deviceName}</Link>
                    </td>
                    <td>
                      <span className={route.state === 'approved' ? 'pill on' : 'pill'}>{route.state}</span>
                      {!route.advertised && ' (no longer advertised)'}
                    </td>
                    <td>
                      {route.exitNode && <span className="pill">exit node</span>}
                      {route.primary && <span className="pill on">primary</span>}
                    </td>
                    {can.write('devices') && (
                      <td>
                        <RouteActions
                          id={route.id}
                          state={route.state}
                          name={`${route.prefix} on ${route.deviceName}`}
                        />
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </>
      )}
    </section>
  );
}

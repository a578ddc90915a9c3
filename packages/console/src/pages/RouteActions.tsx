/** Approve or disable one route; both pages (device detail, routes) use it. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, messageOf } from '../api.ts';

export function RouteActions({ id, state, name }: { id: string; state: string; name: string }) {
  const queries = useQueryClient();
  const change = useMutation({
    mutationFn: (approve: boolean) => (approve ? api.routes.approve(id) : api.routes.disable(id)),
    onSettled: () =>
      Promise.all([
        queries.invalidateQueries({ queryKey: ['routes'] }),
        queries.invalidateQueries({ queryKey: ['device'] }),
      ]),
  });
  return (
    <span className="row-actions">
      {state !== 'approved' && (
        <button
          type="button"
          onClick={() => change.mutate(true)}
          disabled={change.isPending}
          aria-label={`Approve ${name}`}
        >
          Approve
        </button>
      )}
      {state === 'approved' && (
        <button
          type="button"
          onClick={() => change.mutate(false)}
          disabled={change.isPending}
          aria-label={`Disable ${name}`}
        >
          Disable
        </button>
      )}
      {change.isError && <span className="error">{messageOf(change.error)}</span>}
    </span>
  );
}

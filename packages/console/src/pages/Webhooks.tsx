/** Webhooks: endpoints with their state; create (signing secret shown once); send a test; delete. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Can } from '../api.ts';
import { Empty, Failure, Loading, PageHeader, SecretOnce, TableWrap, Time } from '../ui.tsx';

export function Webhooks({ can }: { can: Can }) {
  const queries = useQueryClient();
  const hooks = useQuery({ queryKey: ['webhooks'], queryFn: () => api.webhooks.list() });
  const [secret, setSecret] = useState<string | null>(null);
  const editable = can.write('webhooks');
  const refresh = () => queries.invalidateQueries({ queryKey: ['webhooks'] });
  const create = useMutation({
    mutationFn: (input: { url: string; events: string[] }) => api.webhooks.create(input),
    onSuccess: (created) => {
      setSecret(created.secret);
      return refresh();
    },
  });
  const act = useMutation({
    mutationFn: ({ id, what }: { id: string; what: 'test' | 'delete' }) =>
      what === 'test' ? api.webhooks.test(id) : api.webhooks.delete(id),
    onSettled: refresh,
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const events = String(form.get('events') ?? '')
      .split(/[\s,]+/)
      .filter(Boolean);
    create.mutate({ url: String(form.get('url')).trim(), events: events.length ? events : ['*'] });
  };
  return (
    <section>
      <PageHeader title="Webhooks" />
      {secret && (
        <SecretOnce
          what="the signing secret"
          secret={secret}
          copyLabel="Copy the signing secret"
          onDone={() => setSecret(null)}
        />
      )}
      {editable && (
        <form className="card" onSubmit={submit} aria-labelledby="add-webhook">
          <h2 id="add-webhook">Add an endpoint</h2>
          <label>
            URL
            <input name="url" type="url" required placeholder="https://hooks.example.com/warren" />
          </label>
          <label>
            Events
            <input name="events" placeholder="device.* policy.updated (empty: all)" />
          </label>
          <button type="submit" className="primary" disabled={create.isPending}>
            Add endpoint
          </button>
          {create.isError && <Failure error={create.error} />}
        </form>
      )}
      {act.isError && <Failure error={act.error} />}
      {hooks.isPending ? (
        <Loading what="webhooks" />
      ) : hooks.isError ? (
        <Failure error={hooks.error} retry={() => hooks.refetch()} />
      ) : hooks.data.length === 0 ? (
        <Empty>
          <p>No webhook endpoints. Add one to receive events as they happen.</p>
        </Empty>
      ) : (
        <TableWrap label="Webhook endpoints">
          <table>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">State</th>
                <th scope="col">Last delivery</th>
                {editable && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {hooks.data.map((hook) => (
                <tr key={hook.id}>
                  <td>
                    <code>{hook.url}</code>
                  </td>
                  <td>{hook.events.join(', ')}</td>
                  <td>
                    <span className={hook.enabled ? 'pill on' : 'pill'}>{hook.enabled ? 'enabled' : 'disabled'}</span>
                    {hook.disabledReason && ` ${hook.disabledReason}`}
                  </td>
                  <td>
                    <Time iso={hook.lastDelivery} />
                  </td>
                  {editable && (
                    <td>
                      <span className="row-actions">
                        <button type="button" onClick={() => act.mutate({ id: hook.id, what: 'test' })}>
                          Send a test
                        </button>
                        <button
                          type="button"
                          className="danger"
                          onClick={() => {
                            if (window.confirm(`Delete the endpoint ${hook.url}?`))
                              act.mutate({ id: hook.id, what: 'delete' });
                          }}
                        >
                          Delete
                        </button>
                      </span>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

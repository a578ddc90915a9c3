/**
 * Keys: auth keys (enrollment) and API keys with their state; create (secret shown once, the
 * form opened on demand, tags offered from the policy's tagOwners, scopes from the person's
 * own); delete a key still in use.
 */

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { CreateKeyInput, Scope } from '@warren/client';
import type { KeyBody } from '@warren/contract';
import { type FormEvent, useState } from 'react';
import { api, type Can } from '../api.ts';
import { Empty, Failure, Loading, PageHeader, SecretOnce, TableWrap, Time } from '../ui.tsx';

const SCOPES = ['read', 'devices', 'acls', 'keys', 'users', 'webhooks', 'all'] as const;
const EXPIRIES = ['1h', '1d', '7d', '30d', '90d'];

export function Keys({ can }: { can: Can }) {
  const queries = useQueryClient();
  const keys = useQuery({ queryKey: ['keys'], queryFn: () => api.keys.list() });
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);
  const [creating, setCreating] = useState(false);
  const remove = useMutation({
    mutationFn: (id: string) => api.keys.delete(id),
    onSettled: () => queries.invalidateQueries({ queryKey: ['keys'] }),
  });
  const editable = can.write('keys');
  const confirmDelete = (key: KeyBody) => {
    if (window.confirm(`Delete the key ${key.name || key.id}? Whatever uses it stops working.`)) remove.mutate(key.id);
  };
  return (
    <section>
      <PageHeader title="Keys">
        {editable && !creating && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New key
          </button>
        )}
      </PageHeader>
      {secret && (
        <SecretOnce
          what={`the secret of ${secret.name}`}
          secret={secret.key}
          copyLabel="Copy the secret"
          onDone={() => setSecret(null)}
        />
      )}
      {editable && creating && (
        <CreateKey
          can={can}
          onCreated={(name, key) => {
            setSecret({ name, key });
            setCreating(false);
          }}
          onCancel={() => setCreating(false)}
        />
      )}
      {remove.isError && <Failure error={remove.error} />}
      {keys.isPending ? (
        <Loading what="keys" />
      ) : keys.isError ? (
        <Failure error={keys.error} retry={() => keys.refetch()} />
      ) : keys.data.length === 0 ? (
        <Empty>
          <p>No keys. Create an auth key to enroll devices, or an API key for scripts.</p>
        </Empty>
      ) : (
        <TableWrap label="Keys">
          <table>
            <caption className="sr-only">Auth and API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">State</th>
                <th scope="col">Scopes / tags</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                {editable && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {keys.data.map((key) => (
                <tr key={key.id}>
                  <td>{key.name || key.description || key.id}</td>
                  <td>{key.type}</td>
                  <td>
                    <span className={key.state === 'valid' ? 'pill on' : 'pill'}>{key.state}</span>
                  </td>
                  <td>
                    {key.type === 'api'
                      ? key.scopes.join(', ')
                      : [key.reusable && 'reusable', key.ephemeral && 'ephemeral', ...(key.tags ?? [])]
                          .filter(Boolean)
                          .join(', ') || '—'}
                  </td>
                  <td>
                    <Time iso={key.expires} />
                  </td>
                  <td>
                    <Time iso={key.lastUsed} />
                  </td>
                  {editable && (
                    <td>
                      {/* A revoked key is already deleted: it stays listed for the record only. */}
                      {key.state !== 'revoked' && (
                        <button
                          type="button"
                          className="danger"
                          onClick={() => confirmDelete(key)}
                          aria-label={`Delete ${key.name || key.description || key.id}`}
                        >
                          Delete
                        </button>
                      )}
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

function CreateKey({
  can,
  onCreated,
  onCancel,
}: {
  can: Can;
  onCreated: (name: string, key: string) => void;
  onCancel: () => void;
}) {
  const queries = useQueryClient();
  const [type, setType] = useState<'auth' | 'api'>('auth');
  const [tags, setTags] = useState('');
  // The tags a key may give its devices are the policy's tagOwners.
  const policy = useQuery({ queryKey: ['policy'], queryFn: () => api.acl.get() });
  const defined = Object.keys((policy.data?.policy as { tagOwners?: Record<string, unknown> })?.tagOwners ?? {});
  const chosen = tags.split(/[\s,]+/).filter(Boolean);
  const offered = defined.filter((tag) => !chosen.includes(tag));
  const create = useMutation({
    mutationFn: (input: CreateKeyInput) => api.keys.create(input),
    onSuccess: (created) => {
      onCreated(created.name || created.description || created.id, created.key);
      return queries.invalidateQueries({ queryKey: ['keys'] });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const expiresIn = String(form.get('expiresIn'));
    const description = String(form.get('description') ?? '').trim() || undefined;
    if (type === 'api') {
      create.mutate({
        type: 'api',
        name: String(form.get('name')).trim(),
        scopes: form.getAll('scopes').map(String) as Scope[],
        expiresIn,
        description,
      });
    } else {
      create.mutate({
        type: 'auth',
        reusable: form.get('reusable') === 'on',
        ephemeral: form.get('ephemeral') === 'on',
        tags: chosen.length ? chosen : undefined,
        expiresIn,
        description,
      });
    }
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="create-key">
      <h2 id="create-key">Create a key</h2>
      <fieldset>
        <legend>Type</legend>
        <label>
          <input type="radio" name="type" checked={type === 'auth'} onChange={() => setType('auth')} /> Auth key (enroll
          devices)
        </label>
        <label>
          <input type="radio" name="type" checked={type === 'api'} onChange={() => setType('api')} /> API key (scripts)
        </label>
      </fieldset>
      {type === 'api' ? (
        <>
          <label>
            Name
            <input name="name" required maxLength={64} />
          </label>
          <fieldset>
            <legend>Scopes</legend>
            {/* A key is given only scopes its maker holds (the server refuses any other). */}
            {SCOPES.filter(can.grants).map((scope) => (
              <label key={scope}>
                <input type="checkbox" name="scopes" value={scope} defaultChecked={scope === 'read'} /> {scope}
              </label>
            ))}
          </fieldset>
        </>
      ) : (
        <>
          <label>
            Tags
            <input
              name="tags"
              list="defined-tags"
              placeholder="tag:server tag:ci"
              value={tags}
              onChange={(e) => setTags(e.target.value)}
            />
          </label>
          <datalist id="defined-tags">
            {offered.map((tag) => (
              <option key={tag} value={tag} />
            ))}
          </datalist>
          {offered.length > 0 && (
            <div className="suggestions">
              <span id="tag-suggestions">Tags in the policy:</span>
              {offered.map((tag) => (
                <button
                  key={tag}
                  type="button"
                  aria-describedby="tag-suggestions"
                  aria-label={`Add ${tag}`}
                  onClick={() => setTags([...chosen, tag].join(' '))}
                >
                  {tag}
                </button>
              ))}
            </div>
          )}
          <label>
            <input type="checkbox" name="reusable" /> Reusable
          </label>
          <label>
            <input type="checkbox" name="ephemeral" /> Ephemeral devices
          </label>
        </>
      )}
      <label>
        Expires in
        <select name="expiresIn" defaultValue="90d">
          {EXPIRIES.map((e) => (
            <option key={e}>{e}</option>
          ))}
        </select>
      </label>
      <label>
        Description
        <input name="description" maxLength={200} />
      </label>
      <button type="submit" className="primary" disabled={create.isPending}>
        Create key
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
      {create.isError && <Failure error={create.error} />}
    </form>
  );
}

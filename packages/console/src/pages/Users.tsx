/** Users: roles, status, device count; add, change role, suspend/restore, remove. */

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { WarrenError } from '@warren/client';
import type { UserBody } from '@warren/contract';
import { type FormEvent, useState } from 'react';
import { api, type Can } from '../api.ts';
import { Empty, Failure, Loading, PageHeader, TableWrap, Time } from '../ui.tsx';

const ROLES = ['owner', 'admin', 'network-admin', 'it-admin', 'auditor', 'member'] as const;
type Role = (typeof ROLES)[number];
type UserChange = { role?: Role; status?: 'active' | 'suspended' };

export function Users({ can }: { can: Can }) {
  const queries = useQueryClient();
  const users = useQuery({ queryKey: ['users'], queryFn: () => api.users.list() });
  const editable = can.write('users');
  const change = useMutation({
    mutationFn: async ({ user, input }: { user: UserBody; input: UserChange | null }): Promise<void> => {
      if (input) await api.users.update(user.id, input);
      else await api.users.delete(user.id);
    },
    onSettled: () => queries.invalidateQueries({ queryKey: ['users'] }),
  });
  const lastOwner = change.error instanceof WarrenError && /owner/i.test(change.error.detail);
  return (
    <section>
      <PageHeader title="Users" />
      {editable && <AddUser />}
      {change.isError && (
        <div role="alert">
          <Failure error={change.error} />
          {lastOwner && (
            <p>
              A network always keeps at least one active owner: make someone else an owner first, then change or remove
              this one.
            </p>
          )}
        </div>
      )}
      {users.isPending ? (
        <Loading what="users" />
      ) : users.isError ? (
        <Failure error={users.error} retry={() => users.refetch()} />
      ) : users.data.length === 0 ? (
        <Empty>
          <p>No users yet. Add one above.</p>
        </Empty>
      ) : (
        <TableWrap label="Users">
          <table>
            <caption className="sr-only">Users</caption>
            <thead>
              <tr>
                <th scope="col">Login</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Devices</th>
                <th scope="col">Last seen</th>
                {editable && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {users.data.map((user) => (
                <tr key={user.id}>
                  <td>
                    {user.loginName}
                    {user.displayName && user.displayName !== user.loginName && <small> ({user.displayName})</small>}
                  </td>
                  <td>
                    {editable ? (
                      <select
                        aria-label={`Role of ${user.loginName}`}
                        value={user.role}
                        onChange={(e) => change.mutate({ user, input: { role: e.target.value as Role } })}
                      >
                        {ROLES.map((r) => (
                          <option key={r}>{r}</option>
                        ))}
                      </select>
                    ) : (
                      user.role
                    )}
                  </td>
                  <td>
                    <span className={user.status === 'active' ? 'pill on' : 'pill'}>{user.status}</span>
                  </td>
                  <td>{user.deviceCount}</td>
                  <td>
                    <Time iso={user.lastSeen} />
                  </td>
                  {editable && (
                    <td className="row-actions">
                      <button
                        type="button"
                        onClick={() =>
                          change.mutate({
                            user,
                            input: { status: user.status === 'suspended' ? 'active' : 'suspended' },
                          })
                        }
                      >
                        {user.status === 'suspended' ? 'Restore' : 'Suspend'}
                      </button>
                      <button
                        type="button"
                        className="danger"
                        onClick={() => {
                          if (window.confirm(`Remove ${user.loginName}? Their devices are deleted too.`)) {
                            change.mutate({ user, input: null });
                          }
                        }}
                      >
                        Remove
                      </button>
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

function AddUser() {
  const queries = useQueryClient();
  const add = useMutation({
    mutationFn: (input: { loginName: string; role: Role }) => api.users.create(input),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['users'] }),
  });
  const [loginName, setLoginName] = useState('');
  const [role, setRole] = useState<Role>('member');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate({ loginName: loginName.trim(), role }, { onSuccess: () => setLoginName('') });
  };
  return (
    <form className="card inline" onSubmit={submit} aria-labelledby="add-user">
      <h2 id="add-user">Add a user</h2>
      <label>
        Login (email)
        <input type="email" required value={loginName} onChange={(e) => setLoginName(e.target.value)} />
      </label>
      <label>
        Role
        <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
          {ROLES.map((r) => (
            <option key={r}>{r}</option>
          ))}
        </select>
      </label>
      <button type="submit" className="primary" disabled={add.isPending}>
        Add user
      </button>
      {add.isError && <Failure error={add.error} />}
    </form>
  );
}

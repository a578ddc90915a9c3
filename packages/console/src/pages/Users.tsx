/**
 * Users: roles, status, device count; add, change role, suspend/restore, remove. Nothing about
 * a person changes on a single keystroke: a role picked in the select is saved only with its
 * own button, and suspending asks first (both end the person's sessions). Only the roles the
 * person may give are offered, and the holder of a role they may not give is shown, with no
 * change, suspension or removal offered.
 */

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { WarrenError } from '@warren/client';
import { ROLES, type Role, type UserBody } from '@warren/contract';
import { type FormEvent, useEffect, useState } from 'react';
import { api, type Can } from '../api.ts';
import { Empty, Failure, Loading, PageHeader, TableWrap, Time } from '../ui.tsx';

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
      {editable && <AddUser can={can} />}
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
                <th scope="col">User</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Devices</th>
                <th scope="col">Last seen</th>
                {editable && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {users.data.map((user) => (
                <UserRow
                  key={user.id}
                  user={user}
                  editable={editable}
                  can={can}
                  busy={change.isPending}
                  change={(input) => change.mutate({ user, input })}
                />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

function UserRow(props: {
  user: UserBody;
  editable: boolean;
  can: Can;
  busy: boolean;
  change: (input: UserChange | null) => void;
}) {
  const { user, editable } = props;
  // The role picked in the select, not yet saved.
  const [role, setRole] = useState<Role>(user.role);
  // A saved change (here or elsewhere) is the new starting point.
  useEffect(() => setRole(user.role), [user.role]);
  const picked = role !== user.role;
  const suspend = () => {
    if (
      window.confirm(
        `Suspend ${user.loginName}? Their console sessions end and their devices are disconnected until you restore them. Nothing is deleted.`,
      )
    ) {
      props.change({ status: 'suspended' });
    }
  };
  return (
    <tr>
      <td>
        <span className="login">{user.loginName}</span>
        {user.displayName && user.displayName !== user.loginName && (
          <span className="subtle" title="Display name">
            {user.displayName}
          </span>
        )}
      </td>
      <td>
        {editable && props.can.gives(user.role) ? (
          <span className="row-actions">
            <select
              aria-label={`Role of ${user.loginName}`}
              value={role}
              onChange={(e) => setRole(e.target.value as Role)}
            >
              {ROLES.filter(props.can.gives).map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
            {picked && (
              <>
                <button
                  type="button"
                  className="primary"
                  disabled={props.busy}
                  aria-label={`Make ${user.loginName} ${role}`}
                  onClick={() => props.change({ role })}
                >
                  Save role
                </button>
                <button
                  type="button"
                  onClick={() => setRole(user.role)}
                  aria-label={`Keep ${user.loginName} ${user.role}`}
                >
                  Cancel
                </button>
              </>
            )}
          </span>
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
        <td>
          {/* Suspending, restoring and removing someone take the scopes of their role, as changing it does. */}
          {props.can.gives(user.role) && (
            <span className="row-actions">
              {user.status === 'suspended' ? (
                <button type="button" onClick={() => props.change({ status: 'active' })}>
                  Restore
                </button>
              ) : (
                <button type="button" onClick={suspend}>
                  Suspend
                </button>
              )}
              <button
                type="button"
                className="danger"
                onClick={() => {
                  if (window.confirm(`Remove ${user.loginName}? Their devices are deleted too.`)) props.change(null);
                }}
              >
                Remove
              </button>
            </span>
          )}
        </td>
      )}
    </tr>
  );
}

function AddUser({ can }: { can: Can }) {
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
          {ROLES.filter(can.gives).map((r) => (
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

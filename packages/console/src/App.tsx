/** The shell: who is signed in (GET /v1/me), the navigation it may use, and the page of the URL. */

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { WarrenError } from '@warren/client';
import type { MeBody } from '@warren/contract';
import { lazy, type ReactNode, Suspense, useEffect, useRef } from 'react';
import { type Can, loadMe, permissions, signOut } from './api.ts';
import { DeviceDetail } from './pages/DeviceDetail.tsx';
import { Devices } from './pages/Devices.tsx';
import { Events } from './pages/Events.tsx';
import { Keys } from './pages/Keys.tsx';
import { Logs } from './pages/Logs.tsx';
import { MachineLogin } from './pages/MachineLogin.tsx';
import { Network } from './pages/Network.tsx';
import { RoutesPage } from './pages/Routes.tsx';
import { SignIn } from './pages/SignIn.tsx';
import { SshCheck } from './pages/SshCheck.tsx';
import { Users } from './pages/Users.tsx';
import { Webhooks } from './pages/Webhooks.tsx';
import { rememberReturn, takeReturn } from './return-to.ts';
import { navigate, useLocation } from './router.ts';
import { Empty, Failure, Link, Loading, PageHeader } from './ui.tsx';

// The policy editor brings CodeMirror: loaded when first opened.
const Policy = lazy(() => import('./pages/Policy.tsx').then((m) => ({ default: m.Policy })));

interface Section {
  path: string;
  label: string;
  show: (can: Can) => boolean;
}

const SECTIONS: Section[] = [
  { path: '/devices', label: 'Devices', show: () => true },
  { path: '/routes', label: 'Routes', show: (can) => can.read },
  { path: '/policy', label: 'Policy', show: (can) => can.read },
  { path: '/keys', label: 'Keys', show: (can) => can.read },
  { path: '/users', label: 'Users', show: (can) => can.read },
  { path: '/logs', label: 'Logs', show: (can) => can.read },
  { path: '/events', label: 'Events', show: (can) => can.read },
  { path: '/webhooks', label: 'Webhooks', show: (can) => can.read },
  { path: '/network', label: 'Network', show: (can) => can.read },
];

export function App() {
  const { path } = useLocation();
  const me = useQuery({ queryKey: ['me'], queryFn: loadMe, retry: false, staleTime: 60_000 });
  const queries = useQueryClient();
  // A new page takes the focus, as a page load would: the next Tab starts in its content (not
  // back in the navigation) and a screen reader reads where it landed. Filters in the query
  // keep the same path, so typing in one keeps its focus.
  const shown = useRef(path);
  useEffect(() => {
    if (shown.current === path) return;
    shown.current = path;
    document.getElementById('main')?.focus();
  }, [path]);

  // Back to the page that sent the person to sign in (a login URL), once signed in.
  const signedIn = me.isSuccess;
  useEffect(() => {
    if (!signedIn) return;
    const back = takeReturn();
    if (back && back !== path) navigate(back, true);
  }, [signedIn, path]);

  if (path === '/signin' || (me.error instanceof WarrenError && me.error.status === 401)) {
    const returns = path.startsWith('/register/') || path.startsWith('/ssh-check/');
    if (returns) rememberReturn(path);
    return <SignIn returnTo={returns ? path : undefined} />;
  }
  if (me.isPending) return <Loading what="your session" />;
  if (me.isError) return <Failure error={me.error} retry={() => me.refetch()} />;

  const can = permissions(me.data);
  const who = me.data.user?.loginName ?? me.data.key?.name ?? '';
  const leave = async () => {
    await signOut();
    queries.clear();
    navigate('/signin');
  };
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Warren · {me.data.network.name}</span>
        <nav aria-label="Sections">
          <ul>
            {SECTIONS.filter((s) => s.show(can)).map((s) => {
              const here = path.startsWith(s.path) || (path === '/' && s.path === '/devices');
              return (
                <li key={s.path}>
                  <Link to={s.path} className={here ? 'current' : undefined} current={here}>
                    {s.label}
                  </Link>
                </li>
              );
            })}
          </ul>
        </nav>
        <span className="who">
          {who} {me.data.user && <span className="badge">{me.data.user.role}</span>}
          {me.data.type === 'user' && (
            <button type="button" onClick={leave}>
              Sign out
            </button>
          )}
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        <Suspense fallback={<Loading what="the page" />}>{page(path, can, me.data.user)}</Suspense>
      </main>
    </div>
  );
}

function page(path: string, can: Can, user: MeBody['user']): ReactNode {
  const role = user?.role;
  // A Tailscale client's login URL: open to everyone signed in (members log in their own machines).
  const login = /^\/register\/([^/]+)$/.exec(path);
  if (login) return <MachineLogin token={decodeURIComponent(login[1]!)} me={user ?? null} />;
  // A Tailscale SSH check URL: open to everyone signed in; only the source's owner may confirm.
  const sshCheck = /^\/ssh-check\/([^/]+)$/.exec(path);
  if (sshCheck) return <SshCheck token={decodeURIComponent(sshCheck[1]!)} />;
  // A section the navigation hides is refused here too, before any call it would make is
  // refused by the server: a bookmark or a typed URL then explains instead of failing.
  const section = SECTIONS.find((s) => path === s.path || path.startsWith(`${s.path}/`));
  if (section && !section.show(can)) return <NotForYourRole section={section.label} role={role} />;
  const device = /^\/devices\/([^/]+)$/.exec(path);
  if (device) return <DeviceDetail id={decodeURIComponent(device[1]!)} can={can} />;
  switch (path) {
    case '/':
    case '/devices':
      return <Devices can={can} />;
    case '/routes':
      return <RoutesPage can={can} />;
    case '/policy':
      return <Policy can={can} />;
    case '/keys':
      return <Keys can={can} />;
    case '/users':
      return <Users can={can} />;
    case '/logs':
      return <Logs />;
    case '/events':
      return <Events />;
    case '/webhooks':
      return <Webhooks can={can} />;
    case '/network':
      return <Network can={can} />;
    default:
      return (
        <p className="state">
          No page here. <Link to="/devices">Go to the devices</Link>.
        </p>
      );
  }
}

function NotForYourRole({ section, role }: { section: string; role: string | undefined }) {
  return (
    <section>
      <PageHeader title={section} />
      <Empty>
        <p>
          {role ? `Your role (${role})` : 'This sign-in'} does not include the {section} page. An owner or admin of the
          network can change your role if you need it.
        </p>
        <p>
          <Link to="/devices">Go to your devices</Link>
        </p>
      </Empty>
    </section>
  );
}

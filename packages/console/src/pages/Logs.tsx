/**
 * Logs: the connection log and the audit log, filtered by time and device name / key, read a
 * page at a time as the table scrolls, with a live tail. Connections read as the CLI prints
 * them: device names beside addresses, human byte counts, rows in start-time order. The audit
 * log can show only the calls that changed something.
 */
import type { AuditEntryBody, ConnectionEntryBody } from '@warren/contract';
import type { ReactNode } from 'react';
import { api } from '../api.ts';
import { setQuery, useLocation } from '../router.ts';
import { bytes, Empty, Failure, Loading, PageHeader, TableWrap, Time } from '../ui.tsx';
import { MoreOnScroll, type PagedLog, usePagedLog } from './paged-log.tsx';

const SINCE = ['15m', '1h', '24h', '7d'];
const PAGE = 100;

export function Logs() {
  const { query } = useLocation();
  const audit = query.get('log') === 'audit';
  const since = query.get('since') ?? '1h';
  const who = query.get('who') ?? '';
  const follow = query.get('follow') === '1';
  // The audit log opens on what changed; "all" adds every read and heartbeat.
  const changesOnly = query.get('calls') !== 'all';
  return (
    <section>
      <PageHeader title="Logs" />
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter the log">
        <label>
          Log
          <select
            value={audit ? 'audit' : 'connections'}
            onChange={(e) => setQuery({ log: e.target.value === 'audit' ? 'audit' : undefined, who: undefined })}
          >
            <option value="connections">Connection log</option>
            <option value="audit">Audit log</option>
          </select>
        </label>
        <label>
          Since
          <select value={since} onChange={(e) => setQuery({ since: e.target.value })}>
            {SINCE.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          {audit ? 'API key id' : 'Device'}
          <input
            defaultValue={who}
            key={audit ? 'audit' : 'connections'}
            placeholder={audit ? 'key_…' : 'device name'}
            onChange={(e) => setQuery({ who: e.target.value.trim() })}
          />
        </label>
        {audit && (
          <label>
            <input
              type="checkbox"
              checked={changesOnly}
              onChange={(e) => setQuery({ calls: e.target.checked ? undefined : 'all' })}
            />{' '}
            Changes only
          </label>
        )}
        <label>
          <input
            type="checkbox"
            checked={follow}
            onChange={(e) => setQuery({ follow: e.target.checked ? '1' : undefined })}
          />{' '}
          Live tail
        </label>
      </form>
      {audit ? (
        <AuditLog since={since} keyId={who} changesOnly={changesOnly} follow={follow} />
      ) : (
        <ConnectionLog since={since} device={who} follow={follow} />
      )}
    </section>
  );
}

function Nothing({ since, follow, filtered }: { since: string; follow: boolean; filtered: string }) {
  return (
    <Empty>
      <p>
        Nothing logged in the last {since}
        {filtered}.{' '}
        {follow ? 'New entries appear here as they arrive.' : 'Pick a longer period, or turn on the live tail.'}
      </p>
    </Empty>
  );
}

function LogState<T>({ log, what, children }: { log: PagedLog<T>; what: string; children: ReactNode }) {
  if (log.error) return <Failure error={log.error} />;
  if (log.entries === null) return <Loading what={what} />;
  return <>{children}</>;
}

function ConnectionLog({ since, device, follow }: { since: string; device: string; follow: boolean }) {
  const log = usePagedLog(
    JSON.stringify({ since, device }),
    (cursor) =>
      api.logs.connections(
        cursor
          ? { cursor, device: device || undefined, limit: PAGE }
          : { since, device: device || undefined, limit: PAGE },
      ),
    follow,
  );
  // Pages come in the order Warren recorded entries; people read them by when they started.
  const rows = [...(log.entries ?? [])].sort((a, b) => Date.parse(a.start) - Date.parse(b.start));
  return (
    <LogState log={log} what="the connection log">
      {rows.length === 0 ? (
        <Nothing since={since} follow={follow} filtered={device ? ` for ${device}` : ''} />
      ) : (
        <>
          <TableWrap label="Log entries">
            <table aria-live={follow ? 'polite' : undefined}>
              <caption className="sr-only">Connection log, oldest first</caption>
              <thead>
                <tr>
                  <th scope="col">Start</th>
                  <th scope="col">Source</th>
                  <th scope="col">Destination</th>
                  <th scope="col">Proto</th>
                  <th scope="col">Sent / received</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((e) => (
                  <tr key={e.id}>
                    <td>
                      <Time iso={e.start} />
                    </td>
                    <td>
                      <Endpoint end={e.src} />
                    </td>
                    <td>
                      <Endpoint end={e.dst} />
                    </td>
                    <td>{e.proto}</td>
                    <td title={`${e.txBytes} / ${e.rxBytes} bytes`}>
                      {bytes(e.txBytes)} / {bytes(e.rxBytes)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
          <MoreOnScroll log={log} what="entries" />
        </>
      )}
    </LogState>
  );
}

/** A device by its name (its address beneath), or an address outside the network. */
function Endpoint({ end }: { end: ConnectionEntryBody['src'] }) {
  if (!end.deviceName) return <code>{end.addr}</code>;
  return (
    <>
      <span>{end.deviceName}</span>
      <code className="subtle">{end.addr}</code>
    </>
  );
}

function AuditLog(props: { since: string; keyId: string; changesOnly: boolean; follow: boolean }) {
  const { since, keyId, changesOnly, follow } = props;
  const log = usePagedLog<AuditEntryBody>(
    JSON.stringify({ since, keyId, changesOnly }),
    (cursor) =>
      api.logs.audit({
        ...(cursor ? { cursor } : { since }),
        key: keyId || undefined,
        changes: changesOnly ? 'true' : undefined,
        limit: PAGE,
      }),
    follow,
  );
  const rows = log.entries ?? [];
  return (
    <LogState log={log} what="the audit log">
      {rows.length === 0 ? (
        <Nothing since={since} follow={follow} filtered={changesOnly ? ' that changed anything' : ''} />
      ) : (
        <>
          <TableWrap label="Log entries">
            <table aria-live={follow ? 'polite' : undefined}>
              <caption className="sr-only">Audit log, oldest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Who</th>
                  <th scope="col">Action</th>
                  <th scope="col">Call</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((e) => (
                  <tr key={e.id}>
                    <td>
                      <Time iso={e.time} />
                    </td>
                    <td>{e.userLogin ?? e.keyName ?? e.deviceId ?? '—'}</td>
                    <td>
                      {e.action ?? '—'}
                      {e.target && <code className="subtle">{e.target}</code>}
                    </td>
                    <td>
                      <code>
                        {e.method} {e.path}
                      </code>
                    </td>
                    <td>{e.status}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
          <MoreOnScroll log={log} what="entries" />
        </>
      )}
    </LogState>
  );
}

/** Logs: the connection log and the audit log, filtered by time and device/key, with a live tail. */
import type { AuditEntryBody, ConnectionEntryBody } from '@warren/contract';
import { useEffect, useState } from 'react';
import { api } from '../api.ts';
import { setQuery, useLocation } from '../router.ts';
import { Empty, Failure, Loading, PageHeader, TableWrap, Time } from '../ui.tsx';

const TAIL_MS = 2000;
const SINCE = ['15m', '1h', '24h', '7d'];
type Kind = 'connections' | 'audit';
type Entry = ConnectionEntryBody | AuditEntryBody;

export function Logs() {
  const { query } = useLocation();
  const kind: Kind = query.get('log') === 'audit' ? 'audit' : 'connections';
  const since = query.get('since') ?? '1h';
  const who = query.get('who') ?? '';
  const follow = query.get('follow') === '1';
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const fetchPage = (cursor?: string) =>
      kind === 'audit'
        ? api.logs.audit(cursor ? { cursor, key: who || undefined } : { since, key: who || undefined })
        : api.logs.connections(cursor ? { cursor, device: who || undefined } : { since, device: who || undefined });
    const run = async () => {
      setEntries(null);
      setError(null);
      try {
        let page = await fetchPage();
        let all: Entry[] = [...page.entries];
        while (page.hasMore && !stopped) {
          page = await fetchPage(page.nextCursor);
          all = all.concat(page.entries);
        }
        if (stopped) return;
        setEntries(all);
        let cursor = page.nextCursor;
        const tail = async () => {
          if (stopped) return;
          try {
            const next = await fetchPage(cursor);
            cursor = next.nextCursor ?? cursor;
            if (next.entries.length > 0 && !stopped) setEntries((prev) => [...(prev ?? []), ...next.entries]);
          } catch (e) {
            if (!stopped) setError(e);
          }
          timer = setTimeout(tail, TAIL_MS);
        };
        if (follow) timer = setTimeout(tail, TAIL_MS);
      } catch (e) {
        if (!stopped) setError(e);
      }
    };
    void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [kind, since, who, follow]);

  const newestFirst = entries ? [...entries].reverse() : [];
  return (
    <section>
      <PageHeader title="Logs" />
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter the log">
        <label>
          Log
          <select value={kind} onChange={(e) => setQuery({ log: e.target.value === 'audit' ? 'audit' : undefined })}>
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
          {kind === 'audit' ? 'API key id' : 'Device id'}
          <input defaultValue={who} key={kind} onChange={(e) => setQuery({ who: e.target.value.trim() })} />
        </label>
        <label>
          <input
            type="checkbox"
            checked={follow}
            onChange={(e) => setQuery({ follow: e.target.checked ? '1' : undefined })}
          />{' '}
          Live tail
        </label>
      </form>
      {error ? <Failure error={error} /> : null}
      {entries === null ? (
        <Loading what="the log" />
      ) : entries.length === 0 ? (
        <Empty>
          <p>
            Nothing logged in the last {since}.{' '}
            {follow ? 'New entries appear here as they arrive.' : 'Pick a longer period, or turn on the live tail.'}
          </p>
        </Empty>
      ) : (
        <TableWrap label="Log entries">
          <table aria-live={follow ? 'polite' : undefined}>
            <caption className="sr-only">{kind === 'audit' ? 'Audit log' : 'Connection log'}</caption>
            {kind === 'audit' ? (
              <AuditRows entries={newestFirst as AuditEntryBody[]} />
            ) : (
              <ConnectionRows entries={newestFirst as ConnectionEntryBody[]} />
            )}
          </table>
        </TableWrap>
      )}
    </section>
  );
}

function ConnectionRows({ entries }: { entries: ConnectionEntryBody[] }) {
  return (
    <>
      <thead>
        <tr>
          <th scope="col">Start</th>
          <th scope="col">Source</th>
          <th scope="col">Destination</th>
          <th scope="col">Proto</th>
          <th scope="col">Bytes (tx/rx)</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((e) => (
          <tr key={e.id}>
            <td>
              <Time iso={e.start} />
            </td>
            <td>
              <code>{e.src.addr}</code>
            </td>
            <td>
              <code>{e.dst.addr}</code>
            </td>
            <td>{e.proto}</td>
            <td>
              {e.txBytes} / {e.rxBytes}
            </td>
          </tr>
        ))}
      </tbody>
    </>
  );
}

function AuditRows({ entries }: { entries: AuditEntryBody[] }) {
  return (
    <>
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Who</th>
          <th scope="col">Call</th>
          <th scope="col">Status</th>
          <th scope="col">Action</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((e) => (
          <tr key={e.id}>
            <td>
              <Time iso={e.time} />
            </td>
            <td>{e.userLogin ?? e.keyName ?? e.deviceId ?? '—'}</td>
            <td>
              <code>
                {e.method} {e.path}
              </code>
            </td>
            <td>{e.status}</td>
            <td>{e.action ?? '—'}</td>
          </tr>
        ))}
      </tbody>
    </>
  );
}

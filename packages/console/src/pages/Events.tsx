/**
 * Events: what changed in the network, filtered by type (`device.*`), a page at a time as the
 * table scrolls, with a live tail. Each row names its subject (the device, key, user, route or
 * policy version it is about); opening it shows the whole payload as webhooks receive it.
 */
import type { EventBody } from '@warren/contract';
import { Fragment, useState } from 'react';
import { api } from '../api.ts';
import { setQuery, useLocation } from '../router.ts';
import { CopyButton, Empty, Failure, Link, Loading, PageHeader, TableWrap, Time } from '../ui.tsx';
import { MoreOnScroll, usePagedLog } from './paged-log.tsx';

const SINCE = ['1h', '24h', '7d'];

export function Events() {
  const { query } = useLocation();
  const type = query.get('type') ?? '';
  const since = query.get('since') ?? '24h';
  const follow = query.get('follow') === '1';
  const types = type ? type.split(/[\s,]+/).filter(Boolean) : undefined;
  const log = usePagedLog<EventBody>(
    JSON.stringify({ type, since }),
    (cursor) => api.events.list({ ...(cursor ? { cursor } : { since }), type: types, limit: 100 }),
    follow,
  );
  const [open, setOpen] = useState<string | null>(null);
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
        <label>
          Since
          <select value={since} onChange={(e) => setQuery({ since: e.target.value })}>
            {SINCE.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
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
      {log.error ? (
        <Failure error={log.error} />
      ) : log.entries === null ? (
        <Loading what="events" />
      ) : log.entries.length === 0 ? (
        <Empty>
          <p>
            No events in the last {since}
            {type ? ' of these types' : ''}. Changes to devices, keys, users and the policy appear here.
          </p>
        </Empty>
      ) : (
        <>
          <TableWrap label="Events">
            <table aria-live={follow ? 'polite' : undefined}>
              <caption className="sr-only">Events, oldest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Event</th>
                  <th scope="col">Subject</th>
                  <th scope="col">By</th>
                  <th scope="col">
                    <span className="sr-only">Details</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {log.entries.map((e) => (
                  <Fragment key={e.id}>
                    <tr>
                      <td>
                        <Time iso={e.time} />
                      </td>
                      <td>
                        <code>{e.type}</code>
                      </td>
                      <td>
                        <Subject event={e} />
                      </td>
                      <td>{e.actor.name ?? e.actor.type}</td>
                      <td>
                        <button
                          type="button"
                          aria-expanded={open === e.id}
                          aria-controls={`event-${e.id}`}
                          aria-label={`Details of ${e.type} ${subjectText(e)}`}
                          onClick={() => setOpen(open === e.id ? null : e.id)}
                        >
                          {open === e.id ? 'Hide' : 'Details'}
                        </button>
                      </td>
                    </tr>
                    {open === e.id && (
                      <tr className="detail-row">
                        <td colSpan={5} id={`event-${e.id}`}>
                          <EventDetail event={e} />
                        </td>
                      </tr>
                    )}
                  </Fragment>
                ))}
              </tbody>
            </table>
          </TableWrap>
          <MoreOnScroll log={log} what="events" />
        </>
      )}
    </section>
  );
}

type Record_ = Record<string, unknown>;
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** What an event is about, in words: the record its `data` carries. */
function subjectText(e: EventBody): string {
  const data = e.data as Record<string, Record_ | undefined> & Record_;
  if (data.device) return str(data.device.name) ?? str(data.device.id) ?? 'a device';
  if (data.route) return `${str(data.route.prefix)} on ${str(data.route.deviceName) ?? str(data.route.deviceId)}`;
  if (data.key) return str(data.key.name) || str(data.key.description) || str(data.key.id) || 'a key';
  if (data.user) return str(data.user.loginName) ?? str(data.user.id) ?? 'a user';
  if (data.webhook) return str(data.webhook.url) ?? 'a webhook';
  if (data.version !== undefined) return `policy v${String(data.version)}`;
  return '—';
}

function Subject({ event: e }: { event: EventBody }) {
  const device = (e.data as { device?: Record_ }).device;
  const id = str(device?.id);
  // A deleted device has no page to open.
  if (id && e.type !== 'device.deleted') {
    return <Link to={`/devices/${encodeURIComponent(id)}`}>{subjectText(e)}</Link>;
  }
  return <span>{subjectText(e)}</span>;
}

function EventDetail({ event: e }: { event: EventBody }) {
  const json = JSON.stringify(e, null, 2);
  return (
    <div className="event-detail">
      <dl className="facts">
        <dt>Id</dt>
        <dd>
          <code>{e.id}</code>
        </dd>
        <dt>Time</dt>
        <dd>{new Date(e.time).toLocaleString()}</dd>
        <dt>Actor</dt>
        <dd>
          {e.actor.type}
          {e.actor.name ? ` ${e.actor.name}` : ''}
          {e.actor.id ? ` (${e.actor.id})` : ''}
        </dd>
      </dl>
      <p>
        Payload, as webhooks receive it in <code>data</code>: <CopyButton text={json} label="Copy the event as JSON" />
      </p>
      <pre className="payload">{JSON.stringify(e.data, null, 2)}</pre>
    </div>
  );
}

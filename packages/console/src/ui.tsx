/** Small shared pieces: links, states, relative time, copy. */
import { WarrenError } from '@warren/client';
import type { MouseEvent, ReactNode } from 'react';
import { useEffect, useState } from 'react';
import { messageOf } from './api.ts';
import { navigate } from './router.ts';

export function Link({
  to,
  children,
  className,
  current,
}: {
  to: string;
  children: ReactNode;
  className?: string;
  /** The link of the page shown (aria-current), for the navigation. */
  current?: boolean;
}) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} onClick={onClick} className={className} aria-current={current ? 'page' : undefined}>
      {children}
    </a>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="state" role="status">
      Loading {what}…
    </p>
  );
}

export function Failure({ error, retry }: { error: unknown; retry?: () => void }) {
  return (
    <div className="state error" role="alert">
      <p>{messageOf(error)}</p>
      {retry && (
        <button type="button" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

/**
 * The failure of a page reached through a one-time link (a device's login, an SSH check): a 404
 * means the link itself is unknown, most often copied incompletely, and the person is told what
 * gets them a new one; anything else is shown as any failure.
 */
export function LinkFailure(props: { error: unknown; retry: () => void; link: string; renew: string }) {
  if (!(props.error instanceof WarrenError && props.error.status === 404)) {
    return <Failure error={props.error} retry={props.retry} />;
  }
  return (
    <div className="notice error" role="alert">
      <p>
        <strong>This {props.link} is not known.</strong>
      </p>
      <p>It may have been copied incompletely. {props.renew}</p>
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="state empty">{children}</div>;
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 31_536_000],
  ['month', 2_592_000],
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
];
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  }
  return Math.abs(seconds) < 10 ? 'just now' : relative.format(seconds, 'second');
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span>never</span>;
  return (
    <time dateTime={iso} title={new Date(iso).toLocaleString()}>
      {ago(iso)}
    </time>
  );
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(text);
    setDone(true);
    setTimeout(() => setDone(false), 1500);
  };
  return (
    <button type="button" className="copy" onClick={copy} aria-label={label}>
      {done ? 'Copied' : 'Copy'}
    </button>
  );
}

/** The tab's title: the page first, so a row of tabs (and the history menu) tells pages apart. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Warren`;
  }, [title]);
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  useTitle(title);
  return (
    <header className="page-header">
      <h1>{title}</h1>
      {children && <div className="actions">{children}</div>}
    </header>
  );
}

/** A table that may scroll sideways on a phone: a named region that takes focus to scroll by keyboard. */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
    <section className="table-wrap" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}

/** A secret shown once (a new key, a webhook's signing secret): copy it, then dismiss it. */
export function SecretOnce(props: { what: string; secret: string; copyLabel: string; onDone: () => void }) {
  return (
    <div className="secret" role="alert">
      <p>
        <strong>Copy {props.what} now: it is shown only this once.</strong> Warren keeps only a hash of it.
      </p>
      <code data-testid="secret">{props.secret}</code> <CopyButton text={props.secret} label={props.copyLabel} />
      <button type="button" onClick={props.onDone}>
        I have stored it
      </button>
    </div>
  );
}

const BYTE_UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];

/** A byte count as people read it (decimal units, as `ls -h --si` and Tailscale's console do). */
export function bytes(count: number): string {
  let value = count;
  let unit = 0;
  while (value >= 1000 && unit < BYTE_UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  const shown = unit === 0 || value >= 100 ? Math.round(value).toString() : value.toFixed(1).replace(/\.0$/, '');
  return `${shown} ${BYTE_UNITS[unit]}`;
}

/**
 * Keeps the device views current from the events stream: a cursor into `device.*` and
 * `route.*` events is asked every few seconds (an empty page when nothing happened: a few
 * hundred bytes), and only when something changed are the shown device queries fetched again.
 * A member cannot read events (no `read` scope); their list, of their own devices, is small
 * enough to fetch again now and then.
 */
import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { api } from '../api.ts';

const EVERY_MS = 5_000;
const OWN_DEVICES_EVERY_MS = 30_000;
const TYPES = ['device.*', 'route.*'];

export function useDeviceChanges(canReadEvents: boolean): void {
  const queries = useQueryClient();
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const refresh = () =>
      Promise.all([
        queries.invalidateQueries({ queryKey: ['devices'] }),
        queries.invalidateQueries({ queryKey: ['device'] }),
      ]);
    if (!canReadEvents) {
      const poll = () => {
        timer = setTimeout(async () => {
          await refresh();
          if (!stopped) poll();
        }, OWN_DEVICES_EVERY_MS);
      };
      poll();
      return () => {
        stopped = true;
        clearTimeout(timer);
      };
    }
    let cursor: string | undefined;
    const follow = async () => {
      try {
        // The first call only finds the stream's end (what the page already shows came after it).
        const page = cursor
          ? await api.events.list({ cursor, type: TYPES, limit: 1000 })
          : await api.events.list({ since: '1s', type: TYPES, limit: 1 });
        const changed = cursor !== undefined && page.entries.length > 0;
        cursor = page.nextCursor;
        if (changed && !stopped) await refresh();
      } catch {
        // A failed look is retried at the next tick; the page keeps what it shows.
      }
      if (!stopped) timer = setTimeout(follow, EVERY_MS);
    };
    void follow();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [canReadEvents, queries]);
}

/**
 * `GET /v1/events`: every change of state, paged and tailed like the logs. `type` filters by
 * exact type or family (`device.*`), and may repeat.
 */
import type { EventBody, Page } from '@warren/contract';
import type { Transport } from './http.js';
import { allEntries } from './log-pages.js';
import type { CallOptions, EventQuery, FollowOptions } from './types.js';

export class Events {
  constructor(private readonly http: Transport) {}

  /** One page of events. */
  list(query: EventQuery = {}, options: CallOptions = {}): Promise<Page<EventBody>> {
    return this.http.json('GET', '/v1/events', { ...options, query: { ...query } });
  }

  /**
   * Every event from `query` on, across pages (with `follow`, also the events that happen
   * later); returns the last `nextCursor`, to resume later.
   */
  all(query: EventQuery = {}, options: FollowOptions = {}): AsyncGenerator<EventBody, string> {
    return allEntries((q) => this.list(q, options), query, options);
  }
}

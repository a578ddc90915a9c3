"""Keyset-paged logs: one page of a log, every entry of every page, and, when following, what
arrives later. Any ``{entries, nextCursor, hasMore}`` endpoint pages this way, so a new log is
one ``PagedLog(path, record)`` away."""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, Callable, Deque, Generic, Iterator, Optional, Type, TypeVar

from ._decode import decode
from ._http import QueryValue, Transport
from .errors import invalid_response
from .models import Page

T = TypeVar("T")

# fetch(since, cursor) -> one page; exactly one of the two is set (the API refuses both).
PageFetcher = Callable[[Optional[str], Optional[str]], Page[T]]


class LogIterator(Generic[T]):
    """Yields every entry from ``since`` (or after ``cursor``) on, fetching pages as needed.

    Without ``follow`` it stops at the end of the log. With ``follow`` it keeps asking for what
    arrived since, every ``poll_interval`` seconds, until the loop breaks or ``close()`` is
    called (from any thread; it also ends a wait). ``cursor`` is the ``nextCursor`` of the
    last page fetched: pass it as ``cursor=`` later to continue after that page. An error
    (a WarrenError, a timeout) ends the loop but not the iterator: iterating it again retries
    from where it stopped, never repeating or skipping an entry.
    """

    def __init__(
        self,
        fetch: PageFetcher[T],
        *,
        since: Optional[str],
        cursor: Optional[str],
        follow: bool,
        poll_interval: float,
    ) -> None:
        if since is not None and cursor is not None:
            raise ValueError("give since or cursor, not both: a cursor already says where to start")
        self._fetch = fetch
        self._since = since
        self.cursor = cursor
        self._follow = follow
        self._poll_interval = poll_interval
        self._buffer: Deque[T] = deque()
        self._has_more = True
        self._closed = threading.Event()

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        while not self._buffer:
            if self._closed.is_set():
                raise StopIteration
            if not self._has_more:
                if not self._follow:
                    raise StopIteration
                if self._closed.wait(self._poll_interval):
                    raise StopIteration
            self._read_page()
        return self._buffer.popleft()

    def _read_page(self) -> None:
        page = self._fetch(self._since if self.cursor is None else None, self.cursor)
        self._buffer.extend(page.entries)
        self.cursor = page.next_cursor
        self._has_more = page.has_more

    def close(self) -> None:
        """Stops the iteration (at once when it is waiting for the next poll)."""
        self._closed.set()

    def __enter__(self) -> LogIterator[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def decode_page(cls: Type[T], data: Any) -> Page[T]:
    """A ``{entries, nextCursor, hasMore}`` answer with its entries as ``cls`` records."""
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise invalid_response("expected a page {'entries': [...], 'nextCursor', 'hasMore'}")
    cursor, more = data.get("nextCursor"), data.get("hasMore")
    if not isinstance(cursor, str) or not isinstance(more, bool):
        raise invalid_response("a page without nextCursor or hasMore")
    return Page(entries=tuple(decode(cls, entry) for entry in data["entries"]), next_cursor=cursor, has_more=more)


class PagedLog(Generic[T]):
    """A log at ``path`` whose entries decode as ``record``: the one place that builds its query,
    decodes its pages and tails it. The resources only name their filters."""

    def __init__(self, path: str, record: Type[T]) -> None:
        self.path = path
        self.record = record

    def page(
        self,
        http: Transport,
        *,
        since: Optional[str],
        cursor: Optional[str],
        limit: Optional[int],
        **filters: QueryValue,
    ) -> Page[T]:
        """``GET path``: one page; ``filters`` are the log's own query parameters."""
        query = {"since": since, "cursor": cursor, "limit": limit, **filters}
        return decode_page(self.record, http.json("GET", self.path, query=query))

    def entries(
        self,
        http: Transport,
        *,
        since: Optional[str],
        cursor: Optional[str],
        limit: Optional[int],
        follow: bool,
        poll_interval: float,
        **filters: QueryValue,
    ) -> LogIterator[T]:
        """Every entry from ``since`` (or after ``cursor``) on, page after page; see LogIterator."""

        def fetch(since: Optional[str], cursor: Optional[str]) -> Page[T]:
            return self.page(http, since=since, cursor=cursor, limit=limit, **filters)

        return LogIterator(fetch, since=since, cursor=cursor, follow=follow, poll_interval=poll_interval)

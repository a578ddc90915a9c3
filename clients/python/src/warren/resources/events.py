from __future__ import annotations

from typing import Optional, Sequence

from .._http import Transport
from ..models import Event, Page
from ..paging import LogIterator, decode_page


class Events:
    """``client.events``: every change of state, oldest first, paged and tailed like the logs.

    ``types`` filters by exact type (``"device.created"``) or family (``"device.*"``).
    """

    def __init__(self, http: Transport) -> None:
        self._http = http

    def page(
        self,
        *,
        since: Optional[str] = None,
        types: Optional[Sequence[str]] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Event]:
        """``GET /v1/events``: one page."""
        query = {"since": since, "cursor": cursor, "limit": limit, "type": list(types) if types else None}
        return decode_page(Event, self._http.json("GET", "/v1/events", query=query))

    def list(
        self,
        *,
        since: Optional[str] = None,
        types: Optional[Sequence[str]] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        follow: bool = False,
        poll_interval: float = 2.0,
    ) -> LogIterator[Event]:
        """Every event from ``since`` (or after ``cursor``) on; with ``follow=True`` it keeps polling."""
        return LogIterator(
            lambda since, cursor: self.page(since=since, types=types, limit=limit, cursor=cursor),
            since=since,
            cursor=cursor,
            follow=follow,
            poll_interval=poll_interval,
        )

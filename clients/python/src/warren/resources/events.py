from __future__ import annotations

from typing import Optional, Sequence

from .._http import Transport
from ..models import Event, Page
from ..paging import LogIterator, PagedLog

_EVENTS = PagedLog("/v1/events", Event)


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
        return _EVENTS.page(self._http, since=since, cursor=cursor, limit=limit, type=_types(types))

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
        return _EVENTS.entries(
            self._http,
            since=since,
            cursor=cursor,
            limit=limit,
            follow=follow,
            poll_interval=poll_interval,
            type=_types(types),
        )


def _types(types: Optional[Sequence[str]]) -> Optional[Sequence[str]]:
    # The query repeats ``type=`` once a type; none at all means every type.
    return list(types) if types else None

from __future__ import annotations

from typing import Optional

from .._http import Transport
from ..models import AuditEntry, ConnectionEntry, Page
from ..paging import LogIterator, PagedLog

_CONNECTIONS = PagedLog("/v1/logs/connections", ConnectionEntry)
_AUDIT = PagedLog("/v1/logs/audit", AuditEntry)


class Logs:
    """``client.logs``: the connection log and the audit log, oldest first.

    ``connections`` and ``audit`` iterate over every entry across pages (and, with
    ``follow=True``, keep polling for new ones); the ``*_page`` methods fetch one page.
    ``since`` is a duration (``"15m"``, ``"24h"``, ``"7d"``; the server's default is ``1h``),
    ``cursor`` a ``next_cursor`` from earlier (not with ``since``), and ``limit`` the number
    of entries per page (1–1000, default 100).
    """

    def __init__(self, http: Transport) -> None:
        self._http = http

    def connections_page(
        self,
        *,
        since: Optional[str] = None,
        device: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[ConnectionEntry]:
        """``GET /v1/logs/connections``: one page; ``device`` (an id) matches source or destination."""
        return _CONNECTIONS.page(self._http, since=since, cursor=cursor, limit=limit, device=device)

    def connections(
        self,
        *,
        since: Optional[str] = None,
        device: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        follow: bool = False,
        poll_interval: float = 2.0,
    ) -> LogIterator[ConnectionEntry]:
        """Every connection entry from ``since`` (or after ``cursor``) on; see LogIterator."""
        return _CONNECTIONS.entries(
            self._http,
            since=since,
            cursor=cursor,
            limit=limit,
            follow=follow,
            poll_interval=poll_interval,
            device=device,
        )

    def audit_page(
        self,
        *,
        since: Optional[str] = None,
        key: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        changes: Optional[bool] = None,
    ) -> Page[AuditEntry]:
        """``GET /v1/logs/audit``: one page; ``key`` (an API key id) narrows it to that key's calls,
        ``changes=True`` to the calls that changed state (``False``: those that did not)."""
        return _AUDIT.page(self._http, since=since, cursor=cursor, limit=limit, key=key, changes=changes)

    def audit(
        self,
        *,
        since: Optional[str] = None,
        key: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        changes: Optional[bool] = None,
        follow: bool = False,
        poll_interval: float = 2.0,
    ) -> LogIterator[AuditEntry]:
        """Every audit entry from ``since`` (or after ``cursor``) on; see LogIterator."""
        return _AUDIT.entries(
            self._http,
            since=since,
            cursor=cursor,
            limit=limit,
            follow=follow,
            poll_interval=poll_interval,
            key=key,
            changes=changes,
        )

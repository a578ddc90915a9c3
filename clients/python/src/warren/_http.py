"""The client's transport: kept-alive ``http.client`` connections, bearer auth, JSON in and
out, problems raised as WarrenError, and a bounded wait-and-retry on 429.

A 429 is waited out (Retry-After, capped by ``max_retry_wait``) and retried up to
``max_retries`` times whatever the method, unless the call says ``retry=False``: Warren's rate
limiter refuses before any handler runs, so a 429 means nothing was done and sending a POST or
a PATCH again cannot do it twice. Nothing else is retried (a 5xx or a dropped connection may
mean the change was made), except a kept-alive connection that was closed before the request
reached the server. ``timeout`` bounds the connect and every read.
"""

from __future__ import annotations

import http.client
import json
import logging
import platform
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Type, TypeVar, Union
from urllib.parse import quote, urlencode, urlsplit

from ._version import __version__
from .errors import connection_failed, error_from_response, invalid_response, retry_after_seconds, timed_out

log = logging.getLogger("warren")

QueryValue = Union[str, int, bool, Sequence[str], None]

# Idle connections older than this are dropped rather than reused: servers close idle
# keep-alive connections after a while (Warren after 72 s, many proxies sooner).
_IDLE_SECONDS = 30.0
_MAX_IDLE = 8
# A kept-alive connection the server closed in the meantime fails like this on first use.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


def segment(value: Union[str, int]) -> str:
    """One path segment, escaped (ids are opaque: never let one change the path)."""
    return quote(str(value), safe="")


def compact(body: Mapping[str, Any]) -> Dict[str, Any]:
    """The fields of a request body the caller set (the API refuses a null where it expects a value)."""
    return {name: value for name, value in body.items() if value is not None}


@dataclass(frozen=True)
class Response:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def header(self, name: str) -> Optional[str]:
        return self.headers.get(name)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")

    def json(self) -> Any:
        try:
            return json.loads(self.body.decode("utf-8"))
        except ValueError:
            raise invalid_response(f"expected JSON, got {self.body[:80]!r}") from None


class _Pool:
    """Idle connections to one origin, shared by the threads that use one client."""

    def __init__(self, scheme: str, host: str, port: Optional[int], timeout: float) -> None:
        self._scheme, self._host, self._port, self._timeout = scheme, host, port, timeout
        self._context = ssl.create_default_context() if scheme == "https" else None
        self._idle: List[Tuple[http.client.HTTPConnection, float]] = []
        self._lock = threading.Lock()
        self._closed = False

    def acquire(self) -> Tuple[http.client.HTTPConnection, bool]:
        """A connection and whether it was used before (so may have been closed by the server)."""
        with self._lock:
            while self._idle:
                conn, since = self._idle.pop()
                if time.monotonic() - since < _IDLE_SECONDS:
                    return conn, True
                conn.close()
        if self._context is not None:
            return http.client.HTTPSConnection(self._host, self._port, timeout=self._timeout, context=self._context), False
        return http.client.HTTPConnection(self._host, self._port, timeout=self._timeout), False

    def release(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < _MAX_IDLE:
                self._idle.append((conn, time.monotonic()))
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            conn.close()


class Transport:
    def __init__(
        self,
        url: str,
        token: Optional[str],
        *,
        timeout: float,
        max_retries: int,
        max_retry_wait: float,
        user_agent: Optional[str],
    ) -> None:
        parts = urlsplit(url)
        # A user and password in the URL are not sent (the key is the credential), and are kept
        # out of the base URL that repr() and error messages show.
        host = parts.netloc.rpartition("@")[2]
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {parts.scheme}://{host}{parts.path}")
        self.origin = f"{parts.scheme}://{host}"
        # Accept the API's base as often written (…/v1): every path here starts with /v1.
        self._prefix = re.sub(r"/v1$", "", parts.path.rstrip("/"))
        self.base_url = self.origin + self._prefix
        self._pool = _Pool(parts.scheme, parts.hostname, parts.port, timeout)
        self.token = token
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        agent = f"warren-python/{__version__} (Python {platform.python_version()})"
        self.user_agent = f"{user_agent} {agent}" if user_agent else agent

    def close(self) -> None:
        self._pool.close()

    def json(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, QueryValue]] = None,
        body: Any = None,
        retry: bool = True,
        token: Optional[str] = None,
    ) -> Any:
        """A JSON call: the decoded body of a 2xx answer (None for 204)."""
        response = self.request(method, path, query=query, body=body, retry=retry, token=token)
        return None if response.status == 204 or not response.body else response.json()

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, QueryValue]] = None,
        body: Any = None,
        text: Optional[str] = None,
        content_type: str = "application/json",
        headers: Optional[Mapping[str, str]] = None,
        retry: bool = True,
        token: Optional[str] = None,
    ) -> Response:
        """One call, 429s waited out unless ``retry`` is False; any status ≥ 400 is raised as WarrenError.

        ``payload`` is built once, as bytes, so every attempt sends the same body."""
        target = self._prefix + path + _query_string(query or {})
        sent = {"Accept": "application/json", "User-Agent": self.user_agent, **(headers or {})}
        bearer = token or self.token
        if bearer:
            sent["Authorization"] = f"Bearer {bearer}"
        payload: Optional[bytes] = None
        if text is not None:
            payload = text.encode("utf-8")
        elif body is not None:
            payload = json.dumps(body, separators=(",", ":")).encode("utf-8")
        if payload is not None:
            sent["Content-Type"] = content_type
        retries = self.max_retries if retry else 0
        for attempt in range(retries + 1):
            response = self._send(method, target, payload, sent)
            if response.status == 429 and attempt < retries:
                wait = self._retry_wait(response)
                log.debug("%s %s: 429, retrying in %.1f s (retry %d of %d)", method, path, wait, attempt + 1, retries)
                time.sleep(wait)
                continue
            break
        if response.status >= 400:
            raise error_from_response(response.status, response.body, response.header("Retry-After"))
        return response

    def _retry_wait(self, response: Response) -> float:
        seconds = retry_after_seconds(response.header("Retry-After"))
        return min(1.0 if seconds is None else seconds, self.max_retry_wait)

    def _send(self, method: str, target: str, payload: Optional[bytes], headers: Mapping[str, str]) -> Response:
        while True:
            conn, reused = self._pool.acquire()
            try:
                conn.request(method, target, body=payload, headers=dict(headers))
                answer = conn.getresponse()
                body = answer.read()
            except socket.timeout as error:  # TimeoutError itself from 3.10 on
                conn.close()
                raise timed_out(self.base_url, self.timeout) from error
            except _STALE as error:
                conn.close()
                if reused:
                    continue  # the server closed it while idle; the request never reached it
                raise connection_failed(self.base_url, error) from error
            except (OSError, http.client.HTTPException) as error:  # refused, unresolvable, TLS, a garbled answer
                conn.close()
                raise connection_failed(self.base_url, error) from error
            except BaseException:
                conn.close()
                raise
            if answer.will_close:
                conn.close()
            else:
                self._pool.release(conn)
            return Response(answer.status, answer.headers, body)


_Owner = TypeVar("_Owner", bound="OwnsConnections")


class OwnsConnections:
    """A client that holds kept-alive connections: ``close()``, or a ``with`` block, ends them."""

    _http: Transport

    def close(self) -> None:
        """Closes the kept-alive connections (a later call opens new ones)."""
        self._http.close()

    def __enter__(self: _Owner) -> _Owner:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self.close()


def _query_string(query: Mapping[str, QueryValue]) -> str:
    pairs: List[Tuple[str, str]] = []
    for name, value in query.items():
        for item in _query_values(value):
            pairs.append((name, item))
    return "?" + urlencode(pairs) if pairs else ""


def _query_values(value: QueryValue) -> Iterable[str]:
    if value is None:
        return ()
    if isinstance(value, bool):
        return ("true" if value else "false",)
    if isinstance(value, (str, int)):
        return (str(value),)
    return tuple(value)

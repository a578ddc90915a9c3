"""The exceptions the client raises: ``WarrenError`` and a subclass for each kind of failure.

Everything the API refuses is a ``WarrenError``; the common refusals have their own subclass
(``NotFoundError``, ``RateLimitedError``, …) so ``except`` can pick them out, and network
failures are a ``WarrenConnectionError``. ``code`` (compare with the constants of
``warren.codes``) says exactly what went wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple, Type

from . import codes


@dataclass(frozen=True)
class PolicyProblem:
    """One problem of a refused policy, at the token that caused it (not an exception)."""

    line: int
    column: int
    msg: str

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}: {self.msg}"


class WarrenError(Exception):
    """A non-2xx answer of the API (an RFC 9457 problem), or an answer the client cannot use.

    ``code`` is stable and meant for programs (``not_found``, ``policy_invalid``,
    ``rate_limited``, …); ``detail`` is for people. ``status`` is 0 when the server answered
    something that is not the API's shape (code ``invalid_response``).
    """

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        title: str = "",
        request_id: Optional[str] = None,
        errors: Optional[List[PolicyProblem]] = None,
        retry_after: Optional[float] = None,
        scope: Optional[str] = None,
        index: Optional[int] = None,
    ) -> None:
        self.status = status
        self.code = code
        self.detail = detail
        self.title = title
        self.request_id = request_id
        self.errors: List[PolicyProblem] = list(errors or [])
        self.retry_after = retry_after
        self.scope = scope
        self.index = index
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"{self.status} {self.code}: {self.detail}" if self.status else f"{self.code}: {self.detail}"
        if self.request_id:
            text += f" (request {self.request_id})"
        return "\n  ".join([text, *(str(error) for error in self.errors)])

    def __reduce__(self) -> Tuple[Any, ...]:
        # Exceptions pickle as cls(*args); this one is rebuilt from its attributes instead, so
        # it survives a trip through multiprocessing or concurrent.futures.
        return (_rebuild, (type(self), self.__dict__))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, detail={self.detail!r})"


class BadRequestError(WarrenError):
    """400: a malformed body, query or path value (``invalid_request``, ``unknown_field``,
    ``invalid_duration``, ``invalid_tag``, ``invalid_prefix``, …)."""


class AuthenticationError(WarrenError):
    """401: the key is missing, unknown, expired or revoked (``unauthenticated``, ``key_expired``, ``key_revoked``)."""


class PermissionDeniedError(WarrenError):
    """403: the key lacks a scope (``insufficient_scope``, see ``scope``) or the plan a seat (``plan_limit``)."""


class NotFoundError(WarrenError):
    """404 ``not_found``: no such record in this network."""


class ConflictError(WarrenError):
    """409: the change does not fit the record's state (``invalid_state``, e.g. approving a route
    that is not pending) or a record that exists (``conflict``, e.g. a taken login name)."""


class PreconditionFailedError(WarrenError):
    """412 ``precondition_failed``: the policy changed since the ``if_match`` ETag was read."""


class RateLimitedError(WarrenError):
    """429 ``rate_limited`` after the retries: ``retry_after`` says how long to wait."""


class PolicyInvalidError(BadRequestError):
    """400 ``policy_invalid``: the policy was refused; ``errors`` has each problem's line and column."""


class ServerError(WarrenError):
    """5xx: the server (``internal``) or something in front of it (a proxy's 502, ``http_502``)
    failed. The change may have been made: it is not retried."""


class WarrenConnectionError(WarrenError, ConnectionError):
    """The server could not be reached, or the connection broke before an answer (``status`` 0).

    The network's own exception is the ``__cause__``. It is also a ``ConnectionError`` (an
    ``OSError``), so code written against the standard library's errors keeps working.
    """


class WarrenTimeoutError(WarrenConnectionError, TimeoutError):
    """The server did not answer within the client's ``timeout``; also a ``TimeoutError``."""


# A refusal's class by its code first (policy_invalid is a 400 like many others), then its status.
_BY_CODE: Dict[str, Type[WarrenError]] = {codes.POLICY_INVALID: PolicyInvalidError}
_BY_STATUS: Dict[int, Type[WarrenError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    412: PreconditionFailedError,
    429: RateLimitedError,
}


def _rebuild(cls: Type[WarrenError], state: Dict[str, Any]) -> WarrenError:
    error = cls.__new__(cls)
    error.__dict__.update(state)
    Exception.__init__(error, str(error))
    return error


def invalid_response(detail: str) -> WarrenError:
    """The server answered 2xx with something that is not what the API defines."""
    return WarrenError(0, codes.INVALID_RESPONSE, detail, title="Invalid Response")


def connection_failed(base_url: str, error: Exception) -> WarrenConnectionError:
    """A network failure of a call to ``base_url``, to raise ``from error``."""
    reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return WarrenConnectionError(0, codes.CONNECTION_ERROR, f"cannot reach {base_url}: {reason}", title="Connection Error")


def timed_out(base_url: str, timeout: float) -> WarrenTimeoutError:
    """No answer from ``base_url`` within ``timeout`` seconds."""
    return WarrenTimeoutError(0, codes.TIMEOUT, f"no answer from {base_url} within {timeout:g} s", title="Timeout")


def error_from_response(status: int, body: bytes, retry_after: Optional[str]) -> WarrenError:
    """Builds the error of a non-2xx answer, from its problem body when it has one."""
    problem: Mapping[str, Any] = {}
    try:
        parsed = json.loads(body.decode("utf-8"))
        if isinstance(parsed, dict):
            problem = parsed
    except ValueError:
        pass  # not a problem body: a proxy's error page, say
    text = body.decode("utf-8", "replace").strip()
    code = _str(problem.get("code")) or f"http_{status}"
    cls = _BY_CODE.get(code) or _BY_STATUS.get(status) or (ServerError if status >= 500 else WarrenError)
    return cls(
        status,
        code,
        _str(problem.get("detail")) or text[:200] or f"HTTP {status}",
        title=_str(problem.get("title")) or "",
        request_id=_str(problem.get("requestId")),
        errors=[_policy_error(item) for item in problem.get("errors") or [] if isinstance(item, dict)],
        retry_after=retry_after_seconds(retry_after),
        scope=_str(problem.get("scope")),
        index=problem.get("index") if isinstance(problem.get("index"), int) else None,
    )


def _policy_error(item: Mapping[str, Any]) -> PolicyProblem:
    return PolicyProblem(line=int(item.get("line", 0)), column=int(item.get("column", 0)), msg=str(item.get("msg", "")))


def _str(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def retry_after_seconds(header: Optional[str]) -> Optional[float]:
    """Retry-After as seconds (the API sends an integer ≥ 1; an HTTP date is not used)."""
    if header is None:
        return None
    try:
        value = float(header)
    except ValueError:
        return None
    return value if value >= 0 else None

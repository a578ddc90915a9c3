"""The one exception the client raises for anything the API refuses or answers oddly."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple, Type


@dataclass(frozen=True)
class PolicyError:
    """One problem of a refused policy, at the token that caused it."""

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
        errors: Optional[List[PolicyError]] = None,
        retry_after: Optional[float] = None,
        scope: Optional[str] = None,
        index: Optional[int] = None,
    ) -> None:
        self.status = status
        self.code = code
        self.detail = detail
        self.title = title
        self.request_id = request_id
        self.errors: List[PolicyError] = list(errors or [])
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
        return f"WarrenError(status={self.status!r}, code={self.code!r}, detail={self.detail!r})"


def _rebuild(cls: Type[WarrenError], state: Dict[str, Any]) -> WarrenError:
    error = cls.__new__(cls)
    error.__dict__.update(state)
    Exception.__init__(error, str(error))
    return error


def invalid_response(detail: str) -> WarrenError:
    """The server answered 2xx with something that is not what the API defines."""
    return WarrenError(0, "invalid_response", detail, title="Invalid Response")


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
    return WarrenError(
        status,
        _str(problem.get("code")) or f"http_{status}",
        _str(problem.get("detail")) or text[:200] or f"HTTP {status}",
        title=_str(problem.get("title")) or "",
        request_id=_str(problem.get("requestId")),
        errors=[_policy_error(item) for item in problem.get("errors") or [] if isinstance(item, dict)],
        retry_after=retry_after_seconds(retry_after),
        scope=_str(problem.get("scope")),
        index=problem.get("index") if isinstance(problem.get("index"), int) else None,
    )


def _policy_error(item: Mapping[str, Any]) -> PolicyError:
    return PolicyError(line=int(item.get("line", 0)), column=int(item.get("column", 0)), msg=str(item.get("msg", "")))


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

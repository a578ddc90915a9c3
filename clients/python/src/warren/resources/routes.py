from __future__ import annotations

from typing import Optional, Tuple

from .._decode import decode, decode_list
from .._http import Transport, segment
from ..models import Route, RouteState


class Routes:
    """``client.routes``: subnet routes that devices advertise, and their approval."""

    def __init__(self, http: Transport) -> None:
        self._http = http

    def list(self, *, state: Optional[RouteState] = None, device: Optional[str] = None) -> Tuple[Route, ...]:
        """``GET /v1/routes``; ``device`` is a device id or name."""
        query = {"state": state, "device": device}
        return decode_list(Route, self._http.json("GET", "/v1/routes", query=query), "routes")

    def approve(self, id: str, *, retry: bool = True) -> Route:
        """``POST /v1/routes/{id}/approve``: pending or disabled → approved (else 409 ``invalid_state``)."""
        return decode(Route, self._http.json("POST", f"/v1/routes/{segment(id)}/approve", retry=retry))

    def disable(self, id: str, *, retry: bool = True) -> Route:
        """``POST /v1/routes/{id}/disable``: approved → disabled (else 409 ``invalid_state``)."""
        return decode(Route, self._http.json("POST", f"/v1/routes/{segment(id)}/disable", retry=retry))

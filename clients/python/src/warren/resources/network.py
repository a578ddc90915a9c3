from __future__ import annotations

from .._decode import decode
from .._http import Transport
from ..models import Network


class NetworkInfo:
    """``client.network``: the key's network, its plan, limits and usage."""

    def __init__(self, http: Transport) -> None:
        self._http = http

    def get(self) -> Network:
        """``GET /v1/network``; a limit of ``None`` is unlimited."""
        return decode(Network, self._http.json("GET", "/v1/network"))

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from .._decode import decode
from .._http import Transport, compact
from ..models import SSO, Me, Network


class NetworkInfo:
    """``client.network``: the key's network, its plan, limits and usage."""

    def __init__(self, http: Transport) -> None:
        self._http = http

    def get(self) -> Network:
        """``GET /v1/network``; a limit of ``None`` is unlimited."""
        return decode(Network, self._http.json("GET", "/v1/network"))

    def update(
        self,
        *,
        device_approval: Optional[bool] = None,
        node_key_expiry: Optional[str] = None,
        flow_logs: Optional[bool] = None,
        dns: Optional[Mapping[str, Any]] = None,
        derp: Optional[Mapping[str, Any]] = None,
        retry: bool = True,
    ) -> Network:
        """``PATCH /v1/network`` (scope ``all``): the network's settings; what is left out keeps its value.

        ``dns`` and ``derp`` take the API's field names and merge too, e.g.
        ``dns={"nameservers": ["9.9.9.9"]}``,
        ``dns={"splitDns": {"corp.example": ["10.0.0.53"]}, "extraRecords": [{"name": "grafana.corp.example",
        "type": "A", "value": "100.64.0.10"}]}`` or ``derp={"embedded": False, "regions": [...]}``.
        """
        body = compact(
            {
                "deviceApproval": device_approval,
                "nodeKeyExpiry": node_key_expiry,
                "flowLogs": flow_logs,
                "dns": None if dns is None else dict(dns),
                "derp": None if derp is None else dict(derp),
            }
        )
        return decode(Network, self._http.json("PATCH", "/v1/network", body=body, retry=retry))

    def me(self) -> Me:
        """``GET /v1/me``: who the key is, and what it may do."""
        return decode(Me, self._http.json("GET", "/v1/me"))

    def sso(self) -> SSO:
        """``GET /v1/network/sso``: the single sign-on settings (404 when none are set)."""
        return decode(SSO, self._http.json("GET", "/v1/network/sso"))

    def set_sso(
        self,
        *,
        issuer: str,
        client_id: str,
        client_secret: str,
        allowed_domains: Optional[Sequence[str]] = None,
        enforce: bool = False,
    ) -> SSO:
        """``PUT /v1/network/sso`` (scope ``all``): the OpenID provider people sign in with."""
        body = compact(
            {
                "issuer": issuer,
                "clientId": client_id,
                "clientSecret": client_secret,
                "allowedDomains": None if allowed_domains is None else list(allowed_domains),
                "enforce": enforce,
            }
        )
        return decode(SSO, self._http.json("PUT", "/v1/network/sso", body=body))

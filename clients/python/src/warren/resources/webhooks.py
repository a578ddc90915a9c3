from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

from .._decode import decode, decode_list
from .._http import Transport, compact, segment
from ..models import Page, Webhook, WebhookDelivery
from ..paging import decode_page


class Webhooks:
    """``client.webhooks``: endpoints that receive events, signed by the Standard Webhooks scheme.

    The signing secret (``whsec_…``) is returned by ``create`` and ``rotate`` only.
    """

    def __init__(self, http: Transport) -> None:
        self._http = http

    def list(self) -> Tuple[Webhook, ...]:
        """``GET /v1/webhooks``."""
        return decode_list(Webhook, self._http.json("GET", "/v1/webhooks"), "webhooks")

    def create(self, *, url: str, events: Sequence[str], description: Optional[str] = None, retry: bool = False) -> Webhook:
        """``POST /v1/webhooks``: ``events`` are types (``device.created``), families (``device.*``) or ``*``."""
        body = compact({"url": url, "events": list(events), "description": description})
        return decode(Webhook, self._http.json("POST", "/v1/webhooks", body=body, retry=retry))

    def get(self, id: str) -> Webhook:
        """``GET /v1/webhooks/{id}``."""
        return decode(Webhook, self._http.json("GET", f"/v1/webhooks/{segment(id)}"))

    def update(
        self,
        id: str,
        *,
        url: Optional[str] = None,
        events: Optional[Sequence[str]] = None,
        description: Optional[str] = None,
        enabled: Optional[bool] = None,
        retry: bool = False,
    ) -> Webhook:
        """``PATCH /v1/webhooks/{id}``: what is given changes; enabling clears ``disabled_reason``."""
        body: Dict[str, Any] = compact(
            {"url": url, "events": None if events is None else list(events), "description": description, "enabled": enabled}
        )
        return decode(Webhook, self._http.json("PATCH", f"/v1/webhooks/{segment(id)}", body=body, retry=retry))

    def delete(self, id: str) -> None:
        """``DELETE /v1/webhooks/{id}``."""
        self._http.json("DELETE", f"/v1/webhooks/{segment(id)}")

    def rotate(self, id: str, *, retry: bool = False) -> str:
        """``POST /v1/webhooks/{id}/rotate``: the new secret; the old one signs beside it for 24 hours."""
        answer = self._http.json("POST", f"/v1/webhooks/{segment(id)}/rotate", retry=retry)
        return str(answer["secret"])

    def test(self, id: str, *, retry: bool = False) -> None:
        """``POST /v1/webhooks/{id}/test``: a ``webhook.test`` event to this endpoint only."""
        self._http.json("POST", f"/v1/webhooks/{segment(id)}/test", retry=retry)

    def deliveries(
        self, id: str, *, cursor: Optional[str] = None, limit: Optional[int] = None, state: Optional[str] = None
    ) -> Page[WebhookDelivery]:
        """``GET /v1/webhooks/{id}/deliveries``: one page, oldest first."""
        query = {"cursor": cursor, "limit": limit, "state": state}
        return decode_page(WebhookDelivery, self._http.json("GET", f"/v1/webhooks/{segment(id)}/deliveries", query=query))

    def retry(self, id: str, delivery_id: str, *, retry: bool = False) -> None:
        """``POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry``: deliver again now."""
        self._http.json("POST", f"/v1/webhooks/{segment(id)}/deliveries/{segment(delivery_id)}/retry", retry=retry)

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

from .._decode import decode, decode_list
from .._http import Transport, compact, segment
from ..models import DeliveryState, Page, Webhook, WebhookDelivery
from ..paging import LogIterator, PagedLog


class Webhooks:
    """``client.webhooks``: endpoints that receive events, signed by the Standard Webhooks scheme.

    The signing secret (``whsec_…``) is returned by ``create`` and ``rotate`` only.
    """

    def __init__(self, http: Transport) -> None:
        self._http = http

    def list(self) -> Tuple[Webhook, ...]:
        """``GET /v1/webhooks``."""
        return decode_list(Webhook, self._http.json("GET", "/v1/webhooks"), "webhooks")

    def create(self, *, url: str, events: Sequence[str], description: Optional[str] = None, retry: bool = True) -> Webhook:
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
        retry: bool = True,
    ) -> Webhook:
        """``PATCH /v1/webhooks/{id}``: what is given changes; enabling clears ``disabled_reason``."""
        body: Dict[str, Any] = compact(
            {"url": url, "events": None if events is None else list(events), "description": description, "enabled": enabled}
        )
        return decode(Webhook, self._http.json("PATCH", f"/v1/webhooks/{segment(id)}", body=body, retry=retry))

    def delete(self, id: str) -> None:
        """``DELETE /v1/webhooks/{id}``."""
        self._http.json("DELETE", f"/v1/webhooks/{segment(id)}")

    def rotate(self, id: str, *, retry: bool = True) -> str:
        """``POST /v1/webhooks/{id}/rotate``: the new secret; the old one signs beside it for 24 hours."""
        answer = self._http.json("POST", f"/v1/webhooks/{segment(id)}/rotate", retry=retry)
        return str(answer["secret"])

    def test(self, id: str, *, retry: bool = True) -> None:
        """``POST /v1/webhooks/{id}/test``: a ``webhook.test`` event to this endpoint only."""
        self._http.json("POST", f"/v1/webhooks/{segment(id)}/test", retry=retry)

    def deliveries_page(
        self,
        id: str,
        *,
        state: Optional[DeliveryState] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[WebhookDelivery]:
        """``GET /v1/webhooks/{id}/deliveries``: one page, oldest first."""
        return _deliveries(id).page(self._http, since=None, cursor=cursor, limit=limit, state=state)

    def deliveries(
        self,
        id: str,
        *,
        state: Optional[DeliveryState] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        follow: bool = False,
        poll_interval: float = 2.0,
    ) -> LogIterator[WebhookDelivery]:
        """Every delivery of the endpoint, oldest first, paged like the logs (and, with
        ``follow=True``, the new ones as they are made)."""
        return _deliveries(id).entries(
            self._http, since=None, cursor=cursor, limit=limit, follow=follow, poll_interval=poll_interval, state=state
        )

    def retry(self, id: str, delivery_id: str, *, retry: bool = True) -> None:
        """``POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry``: deliver again now."""
        self._http.json("POST", f"/v1/webhooks/{segment(id)}/deliveries/{segment(delivery_id)}/retry", retry=retry)


def _deliveries(id: str) -> PagedLog[WebhookDelivery]:
    return PagedLog(f"/v1/webhooks/{segment(id)}/deliveries", WebhookDelivery)

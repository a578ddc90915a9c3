"""Webhook endpoints and their deliveries, against deliveries the server really makes to a
receiver on loopback."""

from __future__ import annotations

import time

import pytest

import warren

from .stub_server import StubServer


def test_deliveries_are_paged_like_the_logs(client: warren.Client) -> None:
    with StubServer([(204, [], b"")]) as receiver:
        hook = client.webhooks.create(url=f"{receiver.url}/hook", events=["webhook.test"])
        try:
            sent = 3
            for _ in range(sent):
                client.webhooks.test(hook.id)
            deadline = time.monotonic() + 30
            while len(client.webhooks.deliveries_page(hook.id, state="delivered", limit=1000).entries) < sent:
                assert time.monotonic() < deadline, "the deliveries were not made within 30 s"
                time.sleep(0.2)

            # Pages of one walk every delivery, oldest first, none twice.
            walked = list(client.webhooks.deliveries(hook.id, limit=1))
            assert len({delivery.id for delivery in walked}) == len(walked) == sent
            assert all(d.type == "webhook.test" and d.state == "delivered" and d.attempts >= 1 for d in walked)
            assert list(client.webhooks.deliveries(hook.id, state="failed")) == []
            assert len(receiver.requests) >= sent
        finally:
            client.webhooks.delete(hook.id)


def test_a_missing_endpoints_deliveries_are_not_found(client: warren.Client) -> None:
    with pytest.raises(warren.NotFoundError):
        list(client.webhooks.deliveries("whk_doesnotexist"))

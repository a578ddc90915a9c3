from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from typing import List

import pytest

import warren

from .conftest import Enroll, Server, next_within, unique


def _report(node: warren.NodeClient, registration: warren.Registration, count: int, port: int = 40000) -> None:
    assert registration.device.addresses is not None
    now = datetime.now(timezone.utc)
    node.report_connections(
        [
            warren.ConnectionReport(
                start=now - timedelta(seconds=10),
                end=now,
                proto="tcp",
                src=f"{registration.device.addresses[0]}:{port + n}",
                dst="100.64.255.253:443",
                tx_bytes=100 * n,
                rx_bytes=1000,
                tx_packets=1,
                rx_packets=2,
            )
            for n in range(count)
        ]
    )


def test_pages_follow_the_cursor_and_the_iterator_reads_them_all(client: warren.Client, enroll: Enroll) -> None:
    node, registration = enroll()
    device = registration.device.id
    _report(node, registration, 5)

    first = client.logs.connections_page(device=device, since="1h", limit=2)
    assert len(first.entries) == 2 and first.has_more
    rest = client.logs.connections_page(device=device, cursor=first.next_cursor, limit=10)
    assert len(rest.entries) == 3 and not rest.has_more

    entries = client.logs.connections(device=device, since="1h", limit=2)
    ports = [int(entry.src.addr.rsplit(":", 1)[1]) for entry in entries]
    assert ports == [40000, 40001, 40002, 40003, 40004]
    assert entries.cursor == rest.next_cursor

    entry = first.entries[0]
    assert entry.reported_by == device and entry.src.device_id == device
    assert entry.dst.device_id is None  # an address no device holds
    assert (entry.proto, entry.rx_bytes, entry.tx_packets, entry.rx_packets) == ("tcp", 1000, 1, 2)
    assert entry.logged.tzinfo == timezone.utc and entry.end - entry.start == timedelta(seconds=10)

    # Continuing from the cursor later yields exactly what arrived since.
    _report(node, registration, 1, port=41000)
    later = list(client.logs.connections(device=device, cursor=entries.cursor))
    assert [e.src.addr.rsplit(":", 1)[1] for e in later] == ["41000"]


def test_following_sees_an_entry_that_arrives_after_it_started(client: warren.Client, enroll: Enroll) -> None:
    node, registration = enroll()
    tail = client.logs.connections(device=registration.device.id, since="1h", follow=True, poll_interval=0.1)
    threading.Timer(0.5, _report, (node, registration, 1, 42000)).start()
    entry = next_within(tail)
    assert entry.src.addr.endswith(":42000")
    tail.close()
    assert list(tail) == []


def test_close_ends_a_follow_that_is_waiting(client: warren.Client, enroll: Enroll) -> None:
    _, registration = enroll()
    tail = client.logs.connections(device=registration.device.id, follow=True, poll_interval=30)
    seen: List[warren.ConnectionEntry] = []
    reader = threading.Thread(target=lambda: seen.extend(tail))
    reader.start()
    threading.Timer(0.3, tail.close).start()
    reader.join(timeout=5)
    assert not reader.is_alive() and seen == []


def test_the_audit_log_records_calls_and_can_be_tailed(server: Server, client: warren.Client) -> None:
    created = client.keys.create(type="api", name=unique("audited"), scopes=["read"], expires_in="1h")
    assert created.key is not None
    with warren.Client(server.url, created.key) as audited:
        audited.network.get()
        (entry,) = client.logs.audit(key=created.id, since="1h")
        assert (entry.method, entry.path, entry.status, entry.key_name) == ("GET", "/v1/network", 200, created.name)
        assert entry.request_id and entry.time.tzinfo == timezone.utc

        tail = client.logs.audit(key=created.id, since="1h", follow=True, poll_interval=0.1)
        assert next(tail).id == entry.id
        threading.Timer(0.3, audited.devices.list).start()
        arrived = next_within(tail)
        tail.close()
        assert (arrived.path, arrived.status) == ("/v1/devices", 200)

    page = client.logs.audit_page(since="1h", limit=1)
    assert len(page.entries) == 1 and page.has_more


def test_since_and_cursor_together_are_refused(client: warren.Client) -> None:
    with pytest.raises(ValueError):
        client.logs.audit(since="1h", cursor="anything")
    with pytest.raises(warren.WarrenError) as refused:
        client.logs.audit_page(since="1h", cursor=client.logs.audit_page(limit=1).next_cursor)
    assert refused.value.status == 400

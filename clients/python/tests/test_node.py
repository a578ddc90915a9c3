from __future__ import annotations

from datetime import datetime, timedelta, timezone

from typing import List, Type, TypeVar

import pytest

import warren
from warren._decode import decode

from .conftest import Enroll, Server, node_key


def test_a_node_registers_heartbeats_and_disconnects(client: warren.Client, enroll: Enroll) -> None:
    node, registration = enroll(hostname="py-agent.example.com")
    assert registration.node_token.startswith("wrn_node_")
    assert node.node_token == registration.node_token
    assert registration.device.name.startswith("py-agent")

    beat = node.heartbeat(advertise_routes=["10.78.0.0/24"])
    assert beat.online is True and beat.netmap_version >= 0
    assert [r.prefix for r in client.routes.list(device=registration.device.id)] == ["10.78.0.0/24"]

    node.disconnect()
    assert client.devices.get(registration.device.id).online is False


def test_the_netmap_is_fetched_again_only_when_it_changed(enroll: Enroll) -> None:
    node, registration = enroll()
    netmap = node.netmap()
    assert netmap is not None
    assert netmap.device.id == registration.device.id
    assert node.netmap_etag == f'"{netmap.version}"'
    assert node.netmap(if_none_match=node.netmap_etag) is None  # 304: nothing changed

    # Another device of the same owner, untagged: the default rule lets them reach each other.
    _, peer = enroll()
    changed = node.netmap(if_none_match=node.netmap_etag)
    assert changed is not None and changed.version != netmap.version
    (seen,) = [p for p in changed.peers if p.id == peer.device.id]
    assert peer.device.addresses is not None
    assert seen.addresses == peer.device.addresses
    assert f"{peer.device.addresses[0]}/32" in seen.allowed_ips


T = TypeVar("T")


def test_follow_netmap_applies_only_what_changed_since_the_map_held(
    enroll: Enroll, monkeypatch: pytest.MonkeyPatch
) -> None:
    node, _ = enroll()
    held = node.follow_netmap(None)
    assert held is not None
    _, peer = enroll()
    decoded: List[type] = []

    def recording(cls: Type[T], data: object) -> T:
        decoded.append(cls)
        return decode(cls, data)

    monkeypatch.setattr("warren.node.decode", recording)
    current = node.follow_netmap(held)
    assert current is not None and current.version > held.version
    assert decoded == [warren.NetmapDelta]  # the server sent only what changed
    full = node.netmap()
    assert full is not None
    assert sorted(p.id for p in current.peers) == sorted(p.id for p in full.peers)
    assert peer.device.id in {p.id for p in current.peers}
    assert node.follow_netmap(current) is None  # nothing changed since


def test_a_used_single_use_auth_key_is_refused(server: Server, client: warren.Client) -> None:
    auth = client.keys.create(expires_in="1h")
    assert auth.key is not None
    with warren.NodeClient(server.url) as node:
        node.register(auth.key, hostname="once", os="linux", node_key=node_key())
        with pytest.raises(warren.WarrenError) as refused:
            node.register(auth.key, hostname="twice", os="linux", node_key=node_key())
    assert (refused.value.status, refused.value.code) == (401, "key_revoked")


def test_a_batch_with_a_bad_entry_is_refused_whole(client: warren.Client, enroll: Enroll) -> None:
    node, registration = enroll()
    assert registration.device.addresses is not None
    now = datetime.now(timezone.utc)
    good = warren.ConnectionReport(
        start=now - timedelta(seconds=5),
        end=now,
        proto="tcp",
        src=f"{registration.device.addresses[0]}:50000",
        dst="100.64.255.254:443",
        tx_bytes=1,
    )
    bad = warren.ConnectionReport(start=now, end=now, proto="tcp", src="192.0.2.1:1", dst="100.64.0.1:443")
    with pytest.raises(warren.WarrenError) as refused:
        node.report_connections([good, bad])
    assert (refused.value.status, refused.value.index) == (400, 1)
    assert client.logs.connections_page(device=registration.device.id).entries == ()
    assert node.report_connections([good]) == 1


def test_calls_before_registering_say_so(server: Server) -> None:
    with warren.NodeClient(server.url) as node:
        with pytest.raises(ValueError, match="register first"):
            node.heartbeat()

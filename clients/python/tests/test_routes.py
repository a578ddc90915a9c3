from __future__ import annotations

import pytest

import warren

from .conftest import Enroll


def test_a_route_goes_from_pending_to_approved_to_disabled(client: warren.Client, enroll: Enroll) -> None:
    _, registration = enroll(advertise_routes=["10.77.0.0/24"])
    device_id = registration.device.id

    (route,) = client.routes.list(device=device_id)
    assert (route.prefix, route.state, route.advertised, route.device_id) == ("10.77.0.0/24", "pending", True, device_id)
    assert route.id in {r.id for r in client.routes.list(state="pending")}

    approved = client.routes.approve(route.id)
    assert approved.state == "approved" and approved.approved_at is not None and approved.primary
    with pytest.raises(warren.WarrenError) as refused:
        client.routes.approve(route.id)
    assert (refused.value.status, refused.value.code) == (409, "invalid_state")

    disabled = client.routes.disable(route.id)
    assert disabled.state == "disabled"
    assert route.id in {r.id for r in client.routes.list(state="disabled", device=registration.device.name)}
    assert [r.state for r in client.devices.get(device_id).routes or ()] == ["disabled"]


def test_a_device_approved_for_both_default_routes_is_an_exit_node(client: warren.Client, enroll: Enroll) -> None:
    _, registration = enroll(advertise_routes=["0.0.0.0/0", "::/0"])
    device_id = registration.device.id

    routes = client.routes.list(device=device_id)
    assert sorted(r.prefix for r in routes) == ["0.0.0.0/0", "::/0"]
    assert all(r.exit_node for r in routes)
    assert not client.devices.get(device_id).exit_node
    for route in routes:
        client.routes.approve(route.id)
    device = client.devices.get(device_id)
    assert device.exit_node is True
    assert all(r.exit_node for r in device.routes or ())

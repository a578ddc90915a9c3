from __future__ import annotations

from datetime import datetime, timezone
from typing import Iterator

import pytest

import warren

from .conftest import Enroll, unique


@pytest.fixture
def device_approval(client: warren.Client) -> Iterator[None]:
    """Turns the network's device approval on for one test."""
    assert client.network.update(device_approval=True).device_approval is True
    yield
    client.network.update(device_approval=False)


@pytest.mark.usefixtures("device_approval")
def test_a_new_device_waits_for_approval(client: warren.Client, enroll: Enroll) -> None:
    hostname = unique("pending")
    _, registration = enroll(hostname)
    device = client.devices.get(registration.device.id)
    assert device.authorized is False
    assert device.protocol == "native"
    assert device.dns_name is not None and device.dns_name.startswith(f"{hostname}.")

    assert client.devices.approve(device.id).authorized is True
    with pytest.raises(warren.WarrenError) as refused:
        client.devices.approve(device.id)
    assert refused.value.status == 409 and refused.value.code == "invalid_state"


@pytest.mark.usefixtures("device_approval")
def test_a_pre_approved_key_skips_approval(client: warren.Client, enroll: Enroll) -> None:
    _, registration = enroll(tags=["tag:ci"], pre_approved=True)
    assert client.devices.get(registration.device.id).authorized is True


def test_expiring_a_device_ends_its_login_until_expiry_is_disabled(client: warren.Client, enroll: Enroll) -> None:
    _, registration = enroll()
    device_id = registration.device.id
    key_expiry = client.devices.get(device_id).key_expiry
    assert key_expiry is not None and key_expiry > datetime.now(timezone.utc)

    assert client.devices.expire(device_id).key_expired is True
    lifted = client.devices.update(device_id, key_expiry_disabled=True)
    assert lifted.key_expiry_disabled is True
    assert lifted.key_expired is False
    assert lifted.key_expiry is None

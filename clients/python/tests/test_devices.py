from __future__ import annotations

from datetime import timezone

import pytest

import warren

from .conftest import Enroll, unique


def test_network_reports_its_plan_limits_and_usage(client: warren.Client) -> None:
    network = client.network.get()
    assert network.id.startswith("net_")
    assert network.plan == "premium"
    assert network.limits.users is None  # unlimited
    assert network.limits.log_retention_days == 90
    assert network.usage.users >= 1
    assert network.limits.webhooks is None  # premium: unlimited
    assert network.sso is not None and network.sso.configured is False


def test_a_device_is_listed_read_and_filtered(client: warren.Client, enroll: Enroll) -> None:
    _, registration = enroll()
    device_id = registration.device.id

    device = client.devices.get(device_id)
    assert device.id == device_id
    assert device.online is True
    assert device.created.tzinfo == timezone.utc
    assert device.addresses and device.addresses[0].startswith("100.")
    assert device.client_version == "python-suite"
    assert device.user is not None and device.user.login_name

    listed = {d.id: d for d in client.devices.list(online=True, user=device.user.login_name)}
    assert device_id in listed
    assert listed[device_id].addresses is None  # the list record has no detail fields
    detailed = {d.id: d for d in client.devices.list(fields="all")}
    assert detailed[device_id].addresses == device.addresses
    assert device_id not in {d.id for d in client.devices.list(online=False)}


def test_devices_page_one_at_a_time_in_name_order_without_a_gap_or_a_repeat(
    client: warren.Client, enroll: Enroll
) -> None:
    _, registration = enroll(unique("paged"))
    every = client.devices.list()
    names = []
    cursor = None
    for _ in range(len(every) + 1):
        page = client.devices.page(limit=1, cursor=cursor)
        assert page.total == len(every) and len(page.devices) <= 1
        names += [d.name for d in page.devices]
        if not page.has_more:
            break
        cursor = page.next_cursor
        assert cursor is not None
    assert not page.has_more
    assert names == sorted(d.name for d in every)
    found = client.devices.page(q=registration.device.name)
    assert [d.id for d in found.devices] == [registration.device.id] and found.total == 1


def test_tags_are_replaced_and_filter_the_list(client: warren.Client, enroll: Enroll) -> None:
    _, registration = enroll()
    device_id = registration.device.id

    tagged = client.devices.set_tags(device_id, ["tag:ci", "tag:web"])
    assert set(tagged.tags) == {"tag:ci", "tag:web"}
    assert device_id in {d.id for d in client.devices.list(tags=["tag:ci", "tag:web"])}
    client.devices.set_tags(device_id, ["tag:ci"])
    assert device_id not in {d.id for d in client.devices.list(tags=["tag:ci", "tag:web"])}
    assert client.devices.set_tags(device_id, []).tags == ()


def test_a_tag_outside_tag_owners_is_refused(client: warren.Client, enroll: Enroll) -> None:
    _, registration = enroll()
    with pytest.raises(warren.WarrenError) as refused:
        client.devices.set_tags(registration.device.id, ["tag:undefined-here"])
    assert refused.value.status == 400
    assert refused.value.code == "invalid_tag"
    assert client.devices.get(registration.device.id).tags == ()


def test_a_deleted_device_is_gone_and_its_credential_refused(client: warren.Client, enroll: Enroll) -> None:
    node, registration = enroll()
    client.devices.delete(registration.device.id)

    with pytest.raises(warren.WarrenError) as missing:
        client.devices.get(registration.device.id)
    assert missing.value.status == 404
    assert missing.value.code == "not_found"
    assert missing.value.request_id
    with pytest.raises(warren.WarrenError) as refused:
        node.heartbeat()
    assert refused.value.status == 401


def test_devices_belong_to_the_auth_keys_user_and_filter_by_it(client: warren.Client, enroll: Enroll) -> None:
    user = client.users.create(login_name=f"{unique('dana')}@example.com")
    _, registration = enroll(user=user.login_name)
    assert registration.device.user == warren.UserRef(id=user.id, login_name=user.login_name)
    for who in (user.id, user.login_name):
        assert [d.id for d in client.devices.list(user=who)] == [registration.device.id]
    assert client.devices.list(user="nobody@example.com") == ()  # an unknown user: none, not 404

    client.users.delete(user.id)  # the user's devices go with them
    with pytest.raises(warren.WarrenError) as gone:
        client.devices.get(registration.device.id)
    assert gone.value.code == "not_found"


def test_dns_and_relay_settings_merge_and_name_devices(client: warren.Client, enroll: Enroll) -> None:
    network = client.network.get()
    assert network.dns is not None and network.dns.magic_dns is True
    assert network.derp is not None and network.derp.embedded is True
    region = {"RegionID": 1, "RegionCode": "r1", "Nodes": [{"Name": "1a", "RegionID": 1, "HostName": "derp.example.com"}]}
    try:
        updated = client.network.update(dns={"domain": "corp.example", "nameservers": ["9.9.9.9"]}, derp={"regions": [region]})
        assert updated.dns == warren.NetworkDNS(domain="corp.example", magic_dns=True, nameservers=("9.9.9.9",))
        record = {"name": "grafana.corp.example", "type": "A", "value": "100.64.0.10"}
        split = client.network.update(dns={"splitDns": {"lab.example": ["10.0.0.53"], "local.example": []}, "extraRecords": [record]})
        assert split.dns is not None
        assert split.dns.split_dns == {"lab.example": ("10.0.0.53",), "local.example": ()}
        assert split.dns.extra_records == (warren.DNSRecord(name="grafana.corp.example", type="A", value="100.64.0.10"),)
        assert split.dns.nameservers == ("9.9.9.9",)
        with pytest.raises(warren.WarrenError) as wrong_family:
            client.network.update(dns={"extraRecords": [{**record, "type": "AAAA"}]})
        assert wrong_family.value.code == "invalid_request"
        assert updated.derp == warren.NetworkDERP(embedded=True, regions=(region,))
        hostname = unique("dns")
        _, registration = enroll(hostname)
        assert client.devices.get(registration.device.id).dns_name == f"{hostname}.corp.example"
        with pytest.raises(warren.WarrenError) as refused:
            client.network.update(dns={"nameservers": ["not-an-address"]})
        assert refused.value.code == "invalid_request"
    finally:
        client.network.update(dns={"domain": None, "nameservers": [], "splitDns": {}, "extraRecords": []}, derp={"regions": []})
    assert client.network.get().dns == network.dns

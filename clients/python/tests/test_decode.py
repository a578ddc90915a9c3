"""How answers become records, without a server: the cases a live server does not produce."""

from __future__ import annotations

import pickle
from datetime import datetime, timedelta, timezone
from typing import Any, Dict

import pytest

import warren
from warren._decode import decode, format_time, parse_time

DEVICE: Dict[str, Any] = {
    "id": "dev_1",
    "name": "web-1",
    "hostname": "web-1",
    "os": "linux",
    "online": True,
    "user": {"id": "usr_1", "loginName": "ana@example.com"},
    "tags": ["tag:ci"],
    "created": "2026-11-22T13:46:16.406Z",
    "lastSeen": None,
}


def test_fields_a_newer_server_adds_are_ignored() -> None:
    device = decode(warren.Device, {**DEVICE, "posture": {"ok": True}, "user": {**DEVICE["user"], "avatar": "x"}})
    assert device.user == warren.UserRef(id="usr_1", login_name="ana@example.com")
    assert device.tags == ("tag:ci",) and device.last_seen is None and device.addresses is None


def test_times_are_aware_utc_datetimes() -> None:
    assert parse_time("2026-11-22T13:46:16.406Z") == datetime(2026, 11, 22, 13, 46, 16, 406000, tzinfo=timezone.utc)
    assert parse_time("2026-11-22T14:46:16+01:00") == datetime(2026, 11, 22, 13, 46, 16, tzinfo=timezone.utc)
    assert parse_time("2026-11-22T13:46:16.123456789Z").microsecond == 123456
    assert format_time(datetime(2026, 11, 22, 14, 0, tzinfo=timezone(timedelta(hours=1)))) == "2026-11-22T13:00:00.000Z"


def test_a_value_of_the_wrong_type_is_an_invalid_response() -> None:
    with pytest.raises(warren.WarrenError, match="Device.online"):
        decode(warren.Device, {**DEVICE, "online": "yes"})
    with pytest.raises(warren.WarrenError, match="not an RFC 3339 time"):
        decode(warren.Device, {**DEVICE, "created": "yesterday"})


def test_a_map_of_typed_values_is_converted_value_by_value() -> None:
    dns = decode(warren.NetworkDNS, {"domain": "corp.example", "splitDns": {"lab.example": ["10.0.0.53"], "local.example": []}})
    assert dns.split_dns == {"lab.example": ("10.0.0.53",), "local.example": ()}
    assert decode(warren.NetworkDNS, {"domain": "corp.example"}).split_dns == {}  # an older server
    with pytest.raises(warren.WarrenError, match="NetworkDNS.splitDns.lab.example"):
        decode(warren.NetworkDNS, {"domain": "corp.example", "splitDns": {"lab.example": "10.0.0.53"}})
    with pytest.raises(warren.WarrenError, match="NetworkDNS.splitDns: expected an object"):
        decode(warren.NetworkDNS, {"domain": "corp.example", "splitDns": ["lab.example"]})


def test_records_are_frozen() -> None:
    device = decode(warren.Device, DEVICE)
    with pytest.raises(AttributeError):
        device.name = "other"  # type: ignore[misc]


def test_an_error_names_its_policy_problems() -> None:
    error = warren.WarrenError(
        400,
        "policy_invalid",
        "the policy has 1 problem",
        request_id="req_1",
        errors=[warren.PolicyProblem(line=4, column=35, msg='group "group:ops" is not defined')],
    )
    assert str(error) == (
        '400 policy_invalid: the policy has 1 problem (request req_1)\n'
        '  line 4, column 35: group "group:ops" is not defined'
    )


def test_an_error_survives_pickling() -> None:
    error = warren.RateLimitedError(429, "rate_limited", "slow down", retry_after=7.0, request_id="req_2")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is warren.RateLimitedError
    assert (copy.status, copy.code, copy.detail, copy.retry_after, copy.request_id) == (429, "rate_limited", "slow down", 7.0, "req_2")
    assert str(copy) == str(error)

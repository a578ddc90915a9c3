from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import warren

from .conftest import Enroll, Server, unique


def test_an_auth_key_is_created_read_listed_and_revoked(client: warren.Client) -> None:
    created = client.keys.create(reusable=True, tags=["tag:ci"], expires_in="24h", description="ci runners")
    assert created.key is not None and created.key.startswith("wrn_auth_")
    assert (created.type, created.reusable, created.ephemeral, created.tags) == ("auth", True, False, ("tag:ci",))
    assert created.state == "valid" and created.uses == 0
    expected = datetime.now(timezone.utc) + timedelta(hours=24)
    assert abs((created.expires - expected).total_seconds()) < 60

    read = client.keys.get(created.id)
    assert read.key is None  # the secret is shown once
    assert read.description == "ci runners"
    assert created.id in {k.id for k in client.keys.list(type="auth", state="valid")}
    assert created.id not in {k.id for k in client.keys.list(type="api")}

    client.keys.delete(created.id)
    assert client.keys.get(created.id).state == "revoked"
    assert created.id in {k.id for k in client.keys.list(state="revoked")}
    client.keys.delete(created.id)  # deleting a revoked key again is fine


def test_an_api_key_works_within_its_scopes(server: Server, client: warren.Client) -> None:
    created = client.keys.create(type="api", name=unique("reader"), scopes=["read"], expires_in="1h", rate_limit=50)
    assert created.key is not None and created.key.startswith("wrn_api_")
    assert (created.scopes, created.rate_limit) == (("read",), 50)

    with warren.Client(server.url, created.key) as reader:
        assert reader.network.get().id == client.network.get().id
        with pytest.raises(warren.WarrenError) as refused:
            reader.users.create(login_name=f"{unique('x')}@example.com")
    assert (refused.value.status, refused.value.code) == (403, "insufficient_scope")
    assert refused.value.scope == "users"

    client.keys.delete(created.id)
    with warren.Client(server.url, created.key) as revoked:
        with pytest.raises(warren.WarrenError) as unauthorized:
            revoked.network.get()
    assert (unauthorized.value.status, unauthorized.value.code) == (401, "key_revoked")


def test_a_bad_duration_is_refused(client: warren.Client) -> None:
    with pytest.raises(warren.WarrenError) as refused:
        client.keys.create(expires_in="1w")
    assert (refused.value.status, refused.value.code) == (400, "invalid_duration")


def test_no_secret_in_the_repr_of_a_record(client: warren.Client, enroll: Enroll) -> None:
    """A new key, a registration and a new webhook print without the secret they carry, so
    logging the answer of a create never logs the secret; the attribute still holds it."""
    key = client.keys.create(expires_in="1h", description="repr check")
    _, registration = enroll()
    hook = warren.Webhook(
        id="whk_x",
        url="https://example.com/hook",
        events=("*",),
        description="",
        enabled=True,
        disabled_reason=None,
        created=key.created,
        last_delivery=None,
        secret="whsec_reprcheck",
    )
    assert key.key and registration.node_token and hook.secret
    for record, secret in [(key, key.key), (registration, registration.node_token), (hook, hook.secret)]:
        assert secret not in repr(record) and secret not in str(record)

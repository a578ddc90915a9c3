from __future__ import annotations

import time

import pytest

import warren

from .conftest import Server, unique

def _slow_key(client: warren.Client) -> warren.Key:
    """An API key allowed 3 requests a minute."""
    return client.keys.create(type="api", name=unique("slow"), scopes=["read"], expires_in="1h", rate_limit=3)


def _refusals(client: warren.Client, key_id: str, path: str) -> int:
    return sum(1 for e in client.logs.audit(key=key_id, since="1h") if e.status == 429 and e.path == path)


def test_past_its_rate_limit_a_key_gets_429_with_retry_after(server: Server, client: warren.Client) -> None:
    slow = _slow_key(client)
    assert slow.key is not None
    with warren.Client(server.url, slow.key, max_retries=0) as limited:
        for _ in range(3):
            limited.network.get()
        with pytest.raises(warren.RateLimitedError) as refused:
            limited.network.get()
    error = refused.value
    assert (error.status, error.code) == (429, "rate_limited")
    assert error.retry_after is not None and error.retry_after >= 1
    assert _refusals(client, slow.id, "/v1/network") == 1


def test_every_call_is_retried_on_429_unless_told_not_to(server: Server, client: warren.Client) -> None:
    slow = _slow_key(client)
    assert slow.key is not None
    with warren.Client(server.url, slow.key, max_retries=2, max_retry_wait=0.1) as limited:
        for _ in range(3):
            limited.network.get()
        started = time.monotonic()
        with pytest.raises(warren.WarrenError) as read:
            limited.devices.list()
        assert time.monotonic() - started >= 0.2  # two waits, capped by max_retry_wait
        with pytest.raises(warren.WarrenError) as validate:
            limited.policy.validate("{}")
        with pytest.raises(warren.WarrenError) as create:
            limited.users.create(login_name=f"{unique('z')}@example.com")
        with pytest.raises(warren.WarrenError) as create_once:
            limited.users.create(login_name=f"{unique('z')}@example.com", retry=False)
    assert read.value.status == validate.value.status == create.value.status == create_once.value.status == 429
    assert _refusals(client, slow.id, "/v1/devices") == 3  # the call and two retries
    assert _refusals(client, slow.id, "/v1/acl/validate") == 3
    assert _refusals(client, slow.id, "/v1/users") == 3 + 1  # a POST too, but once with retry=False


def test_an_unknown_key_is_unauthenticated(server: Server) -> None:
    with warren.Client(server.url, "wrn_api_nope") as client:
        with pytest.raises(warren.AuthenticationError) as refused:
            client.network.get()
    assert (refused.value.status, refused.value.code) == (401, warren.codes.UNAUTHENTICATED)


def test_each_kind_of_refusal_is_its_own_subclass(server: Server, client: warren.Client) -> None:
    with pytest.raises(warren.NotFoundError) as missing:
        client.devices.get("dev_doesnotexist")
    assert (missing.value.status, missing.value.code) == (404, warren.codes.NOT_FOUND)

    current = client.policy.get_text()
    with pytest.raises(warren.PreconditionFailedError) as stale:
        client.policy.set(current.text, if_match='"stale"')
    assert stale.value.code == warren.codes.PRECONDITION_FAILED

    with pytest.raises(warren.PolicyInvalidError) as invalid:
        client.policy.set('{ "acls": [ { "action": "accept", "src": ["group:nope"], "dst": ["*:*"] } ] }')
    problem = invalid.value.errors[0]
    assert isinstance(problem, warren.PolicyProblem) and not isinstance(problem, BaseException)
    assert (problem.line, invalid.value.code) == (1, warren.codes.POLICY_INVALID)

    reader = client.keys.create(type="api", name=unique("reader"), scopes=["read"], expires_in="1h")
    assert reader.key is not None
    with warren.Client(server.url, reader.key) as limited:
        with pytest.raises(warren.PermissionDeniedError) as denied:
            limited.users.create(login_name=f"{unique('denied')}@example.com")
    assert (denied.value.status, denied.value.code, denied.value.scope) == (403, warren.codes.INSUFFICIENT_SCOPE, "users")

    # Every one is still a WarrenError, so one except clause can catch them all.
    for refused in (missing, stale, invalid, denied):
        assert isinstance(refused.value, warren.WarrenError)


def test_the_environment_gives_the_defaults(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARREN_URL", server.url)
    monkeypatch.setenv("WARREN_API_KEY", server.api_key)
    with warren.Client() as client:
        assert client.url == server.url
        assert client.network.get().name


def test_a_missing_setting_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WARREN_URL", raising=False)
    monkeypatch.delenv("WARREN_API_KEY", raising=False)
    with pytest.raises(ValueError, match="WARREN_URL"):
        warren.Client(api_key="wrn_api_x")
    with pytest.raises(ValueError, match="WARREN_API_KEY"):
        warren.Client("http://127.0.0.1:8080")
    with pytest.raises(ValueError, match="not an http"):
        warren.Client("127.0.0.1:8080", "wrn_api_x")


def test_no_secret_in_what_a_client_shows(server: Server) -> None:
    """Neither the key nor a password in the URL appears in a repr or an error message."""
    key, password = "wrn_api_leakcheck", "hunter2"
    shown = []
    with warren.Client(f"http://ops:{password}@127.0.0.1:9/", key, timeout=5) as client:
        shown += [repr(client), client.url, repr(client.devices)]
        with pytest.raises(warren.WarrenConnectionError) as unreachable:
            client.network.get()
        shown += [str(unreachable.value), repr(unreachable.value)]
    with pytest.raises(ValueError) as not_http:
        warren.Client(f"ftp://ops:{password}@example.com", key)
    shown.append(str(not_http.value))
    with warren.Client(server.url, key) as client:
        with pytest.raises(warren.AuthenticationError) as refused:
            client.network.get()
    shown += [str(refused.value), repr(refused.value)]
    leaks = [text for text in shown if key in text or password in text]
    assert not leaks
    assert client.url == server.url

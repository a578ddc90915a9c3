"""The transport against a scripted HTTP server, for what the Warren server cannot be made to
do on demand, and against the real one for sharing a client between threads."""

from __future__ import annotations

import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from typing import List, Optional

import pytest

import warren

from .conftest import Server
from .stub_server import Answer, StubServer

NETWORK = {
    "id": "net_stub",
    "name": "stub",
    "plan": "free",
    "limits": {"users": 3, "devices": 100, "logRetentionDays": 7},
    "usage": {"users": 1, "devices": 0},
}
JSON = [("Content-Type", "application/json")]
# What Warren's rate limiter answers, before any handler runs.
RATE_LIMITED = (
    429,
    [("Retry-After", "1"), ("Content-Type", "application/problem+json")],
    b'{"status":429,"code":"rate_limited","detail":"slow down","requestId":"req_stub"}',
)
KEY = {
    "id": "key_stub",
    "type": "auth",
    "description": "retried after a 429",
    "scopes": [],
    "created": "2026-11-22T13:46:16.406Z",
    "expires": "2026-11-22T14:46:16.406Z",
    "state": "valid",
    "uses": 0,
    "lastUsed": None,
    "createdBy": "key_admin",
    "key": "wrn_auth_stub",
    "tags": ["tag:ci"],
}
WEBHOOK = {
    "id": "whk_stub",
    "url": "https://hooks.example.com/warren",
    "events": ["device.*"],
    "description": "renamed after a 429",
    "enabled": False,
    "disabledReason": None,
    "created": "2026-11-22T13:46:16.406Z",
    "lastDelivery": None,
}


def test_a_429_that_clears_is_waited_out_on_the_same_connection() -> None:
    answers = [
        (429, [("Retry-After", "1"), ("Content-Type", "application/problem+json")], b'{"code":"rate_limited"}'),
        (200, JSON, json.dumps(NETWORK).encode()),
    ]
    with StubServer(answers) as stub, warren.Client(stub.url, "wrn_api_stub", max_retry_wait=0.05) as client:
        network = client.network.get()
        assert network.limits == warren.NetworkLimits(users=3, devices=100, log_retention_days=7)
        client.network.get()
    assert [path for _, path, _ in stub.requests] == ["/v1/network"] * 3
    assert len({port for _, _, port in stub.requests}) == 1  # kept alive
    assert stub.headers[0]["Authorization"] == "Bearer wrn_api_stub"
    assert stub.headers[0]["User-Agent"].startswith(f"warren-python/{warren.__version__}")


def _sent_twice_intact_after_the_wait(stub: StubServer, method: str, path: str) -> None:
    assert [(m, p) for m, p, _ in stub.requests] == [(method, path)] * 2
    assert stub.bodies[0] != b"" and stub.bodies[1] == stub.bodies[0]
    assert stub.times[1] - stub.times[0] >= 1.0  # Retry-After: 1


def test_a_post_refused_with_429_is_waited_out_and_sent_again_intact() -> None:
    # A 429 means the server did nothing, so a create is retried like a read, with no opt-in.
    with StubServer([RATE_LIMITED, (201, JSON, json.dumps(KEY).encode())]) as stub:
        with warren.Client(stub.url, "wrn_api_stub") as client:
            key = client.keys.create(description="retried after a 429", tags=["tag:ci"], expires_in="1h")
    assert (key.id, key.key) == ("key_stub", "wrn_auth_stub")
    _sent_twice_intact_after_the_wait(stub, "POST", "/v1/keys")
    assert json.loads(stub.bodies[1]) == {"type": "auth", "description": "retried after a 429", "tags": ["tag:ci"], "expiresIn": "1h"}


def test_a_patch_refused_with_429_is_waited_out_and_sent_again_intact() -> None:
    with StubServer([RATE_LIMITED, (200, JSON, json.dumps(WEBHOOK).encode())]) as stub:
        with warren.Client(stub.url, "wrn_api_stub") as client:
            hook = client.webhooks.update("whk_stub", description="renamed after a 429", enabled=False)
    assert (hook.description, hook.enabled) == ("renamed after a 429", False)
    _sent_twice_intact_after_the_wait(stub, "PATCH", "/v1/webhooks/whk_stub")
    assert json.loads(stub.bodies[1]) == {"description": "renamed after a 429", "enabled": False}


def test_with_retries_off_a_429_is_raised_at_once() -> None:
    answers = [RATE_LIMITED, (201, JSON, json.dumps(KEY).encode())]
    with StubServer(answers) as whole_client, warren.Client(whole_client.url, "wrn_api_stub", max_retries=0) as client:
        with pytest.raises(warren.RateLimitedError) as refused:
            client.keys.create(description="never made")
    with StubServer(answers) as one_call, warren.Client(one_call.url, "wrn_api_stub") as client:
        with pytest.raises(warren.RateLimitedError) as refused_once:
            client.webhooks.update("whk_stub", enabled=False, retry=False)
    for error in (refused.value, refused_once.value):
        assert isinstance(error, warren.WarrenError)
        assert (error.status, error.code, error.retry_after, error.request_id) == (429, warren.codes.RATE_LIMITED, 1.0, "req_stub")
    assert len(whole_client.requests) == len(one_call.requests) == 1


def test_a_server_that_never_answers_times_out() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)  # accepts connections, never reads or answers
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with warren.Client(url, "wrn_api_stub", timeout=0.3) as client:
            started = time.monotonic()
            with pytest.raises(TimeoutError, match="within 0.3 s") as timed_out:
                client.network.get()
    assert time.monotonic() - started < 3
    # A WarrenError like every other failure, and still the standard library's TimeoutError.
    assert isinstance(timed_out.value, warren.WarrenTimeoutError)
    assert isinstance(timed_out.value, warren.WarrenConnectionError)
    assert (timed_out.value.status, timed_out.value.code) == (0, warren.codes.TIMEOUT)


def test_a_server_that_cannot_be_reached_is_a_connection_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))  # bound, not listening: connecting is refused
        url = f"http://127.0.0.1:{taken.getsockname()[1]}"
        with warren.Client(url, "wrn_api_stub") as client:
            with pytest.raises(warren.WarrenConnectionError) as refused:
                client.network.get()
    error = refused.value
    assert (error.status, error.code) == (0, warren.codes.CONNECTION_ERROR)
    assert url in error.detail
    assert isinstance(error, warren.WarrenError) and isinstance(error, ConnectionError)
    assert isinstance(error.__cause__, ConnectionRefusedError)


def test_an_answer_that_is_not_a_problem_still_raises_warren_error() -> None:
    answers = [(502, [("Content-Type", "text/html")], b"<html>Bad Gateway</html>"), (200, JSON, b"not json")]
    with StubServer(answers) as stub, warren.Client(stub.url, "wrn_api_stub") as client:
        with pytest.raises(warren.WarrenError) as proxy:
            client.network.get()
        with pytest.raises(warren.WarrenError) as garbage:
            client.network.get()
    assert (proxy.value.status, proxy.value.code) == (502, "http_502")
    assert "Bad Gateway" in proxy.value.detail
    assert (garbage.value.status, garbage.value.code) == (0, "invalid_response")


def test_a_record_missing_a_required_field_is_an_invalid_response() -> None:
    partial = {key: value for key, value in NETWORK.items() if key != "usage"}
    with StubServer([(200, JSON, json.dumps(partial).encode())]) as stub:
        with warren.Client(stub.url, "wrn_api_stub") as client:
            with pytest.raises(warren.WarrenError, match="usage"):
                client.network.get()


def test_a_connection_the_server_dropped_while_idle_is_replaced() -> None:
    with StubServer([(200, JSON, json.dumps(NETWORK).encode())], drop_idle=True) as stub:
        with warren.Client(stub.url, "wrn_api_stub") as client:
            assert client.network.get() == client.network.get()
    assert len({port for _, _, port in stub.requests}) == 2


def test_a_base_url_keeps_its_path_and_may_end_in_v1() -> None:
    with StubServer([(200, JSON, json.dumps(NETWORK).encode())]) as stub:
        with warren.Client(f"{stub.url}/warren/", "wrn_api_stub") as client:
            client.network.get()
            assert client.url == f"{stub.url}/warren"
        with warren.Client(f"{stub.url}/v1", "wrn_api_stub") as client:
            client.network.get()
            assert client.url == stub.url
    assert [path for _, path, _ in stub.requests] == ["/warren/v1/network", "/v1/network"]


def test_one_client_serves_many_threads(client: warren.Client) -> None:
    with ThreadPoolExecutor(max_workers=8) as pool:
        names = list(pool.map(lambda _: client.network.get().name, range(40)))
    assert len(set(names)) == 1


def _audit_page(entry_ids: List[str], cursor: str, more: bool) -> bytes:
    entry = {
        "time": "2026-11-22T13:46:16.094Z",
        "keyId": None,
        "keyName": None,
        "deviceId": None,
        "method": "GET",
        "path": "/v1/network",
        "status": 200,
        "clientAddr": "127.0.0.1",
        "requestId": "req_1",
        "action": None,
        "target": None,
    }
    page = {"entries": [{**entry, "id": i} for i in entry_ids], "nextCursor": cursor, "hasMore": more}
    return json.dumps(page).encode()


def test_a_log_iterator_resumes_after_an_error_without_repeating_or_skipping() -> None:
    answers = [
        (200, JSON, _audit_page(["aud_1", "aud_2"], "c1", True)),
        (500, [("Content-Type", "application/problem+json")], b'{"code":"internal","detail":"boom"}'),
        (200, JSON, _audit_page(["aud_3"], "c2", False)),
    ]
    with StubServer(answers) as stub, warren.Client(stub.url, "wrn_api_stub") as client:
        entries = client.logs.audit(since="24h", limit=2)
        seen: List[str] = []
        with pytest.raises(warren.WarrenError) as failed:
            for entry in entries:
                seen.append(entry.id)
        assert failed.value.code == "internal" and seen == ["aud_1", "aud_2"]
        seen.extend(entry.id for entry in entries)
    assert seen == ["aud_1", "aud_2", "aud_3"] and entries.cursor == "c2"
    assert [path for _, path, _ in stub.requests] == [
        "/v1/logs/audit?since=24h&limit=2",
        "/v1/logs/audit?cursor=c1&limit=2",
        "/v1/logs/audit?cursor=c1&limit=2",
    ]


@pytest.mark.parametrize(
    "status, code, kind",
    [
        (400, "invalid_duration", "BadRequestError"),
        (400, "policy_invalid", "PolicyInvalidError"),
        (401, "key_expired", "AuthenticationError"),
        (403, "plan_limit", "PermissionDeniedError"),
        (404, "not_found", "NotFoundError"),
        (409, "invalid_state", "ConflictError"),
        (409, "conflict", "ConflictError"),
        (412, "precondition_failed", "PreconditionFailedError"),
        (500, "internal", "ServerError"),
        (502, None, "ServerError"),
        (418, "teapot", "WarrenError"),
    ],
)
def test_each_status_raises_its_own_subclass(status: int, code: Optional[str], kind: str) -> None:
    """So ``except warren.ConflictError`` picks out a 409, and a proxy's 502 is a ServerError."""
    if code is None:
        answer: Answer = (status, [("Content-Type", "text/html")], b"<html>bad gateway</html>")
    else:
        answer = (status, JSON, json.dumps({"status": status, "code": code, "detail": "d"}).encode())
    with StubServer([answer]) as stub:
        with warren.Client(stub.url, "wrn_api_stub") as client:
            with pytest.raises(warren.WarrenError) as raised:
                client.network.get()
    assert type(raised.value) is getattr(warren, kind)
    assert raised.value.status == status and raised.value.code == (code or f"http_{status}")
    if kind == "PolicyInvalidError":
        assert isinstance(raised.value, warren.BadRequestError)


def test_what_the_client_is_given_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARREN_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("WARREN_API_KEY", "wrn_api_from_env")
    with StubServer([(200, JSON, json.dumps(NETWORK).encode())]) as stub:
        with warren.Client(stub.url, "wrn_api_given") as client:
            client.network.get()
    assert stub.headers[0]["Authorization"] == "Bearer wrn_api_given"

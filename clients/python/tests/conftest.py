"""A real Warren server for the whole suite: ``warren init`` on a fresh SQLite file, then
``warren serve`` on a free port, stopped when the session ends."""

from __future__ import annotations

import json
import os
import secrets
import shlex
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence, Tuple, TypeVar

import pytest

import warren

REPO = Path(__file__).resolve().parents[3]
# The checkout's command, unless WARREN_COMMAND names another: the packaging checks run the
# tests of the built sdist against an installed wheel and an installed `warren`.
WARREN = shlex.split(os.environ.get("WARREN_COMMAND", "")) or [
    "node",
    str(REPO / "packages" / "cli" / "bin" / "warren.js"),
]

# The suite's policy: the tags the tests give out, members reaching their own devices, and
# tag:ci reaching tag:server. Tests that change the policy put this one back.
BASE_POLICY = """{
  // the test suite's policy
  "tagOwners": {
    "tag:ci": ["autogroup:admin"],
    "tag:server": ["autogroup:admin"],
    "tag:web": ["autogroup:admin"],
  },
  "acls": [
    { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] },
    { "action": "accept", "src": ["tag:ci"], "dst": ["tag:server:22,443"] },
  ],
}
"""


@dataclass(frozen=True)
class Server:
    url: str
    #: The ``all`` key printed by ``warren init`` (100 requests a minute).
    init_key: str
    #: An ``all`` key with a high rate limit, so the suite never waits for a 429.
    api_key: str


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_ready(url: str, process: "subprocess.Popen[bytes]", log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"warren serve exited with {process.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=1) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"warren serve was not ready within 30 s:\n{log.read_text()}")


def _create_suite_key(url: str, init_key: str) -> str:
    """Plain urllib, so that a broken client cannot break the suite's own setup."""
    body = {"type": "api", "name": "python-suite", "scopes": ["all"], "expiresIn": "80d", "rateLimit": 100000}
    request = urllib.request.Request(
        f"{url}/v1/keys",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {init_key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        key: str = json.loads(answer.read())["key"]
        return key


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("warren")
    database = f"sqlite:{tmp / 'warren.db'}"
    init = subprocess.run([*WARREN, "init", "--db", database, "--json"], cwd=tmp, capture_output=True, text=True)
    if init.returncode != 0:
        raise RuntimeError(f"warren init exited with {init.returncode}:\n{init.stderr}")
    init_key = json.loads(init.stdout)["apiKey"]
    url = f"http://127.0.0.1:{_free_port()}"
    log = tmp / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            # Webhook tests deliver to a receiver on loopback over plain http, which only this allows.
            [*WARREN, "serve", "--db", database, "--host", "127.0.0.1", "--port", url.rsplit(":", 1)[1], "--webhooks-allow-private"],
            cwd=tmp,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_ready(url, process, log)
            yield Server(url=url, init_key=init_key, api_key=_create_suite_key(url, init_key))
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="session")
def client(server: Server) -> Iterator[warren.Client]:
    with warren.Client(server.url, server.api_key) as session_client:
        session_client.policy.set(BASE_POLICY)
        yield session_client


def node_key() -> str:
    return "nodekey:" + secrets.token_hex(32)


def unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(4)}"


Enroll = Callable[..., Tuple[warren.NodeClient, warren.Registration]]


@pytest.fixture
def enroll(server: Server, client: warren.Client) -> Iterator[Enroll]:
    """Enrolls devices through the node protocol: ``enroll(hostname, tags=, user=, advertise_routes=, pre_approved=)``."""
    nodes: List[warren.NodeClient] = []

    def enroll_one(
        hostname: Optional[str] = None,
        *,
        tags: Sequence[str] = (),
        user: Optional[str] = None,
        advertise_routes: Optional[Sequence[str]] = None,
        pre_approved: Optional[bool] = None,
    ) -> Tuple[warren.NodeClient, warren.Registration]:
        auth = client.keys.create(
            tags=tags, user=user, pre_approved=pre_approved, expires_in="1h", description="python suite"
        )
        assert auth.key is not None
        node = warren.NodeClient(server.url)
        nodes.append(node)
        registration = node.register(
            auth.key,
            hostname=hostname or unique("node"),
            os="linux",
            node_key=node_key(),
            client_version="python-suite",
            advertise_routes=advertise_routes,
        )
        return node, registration

    yield enroll_one
    for node in nodes:
        node.close()


T = TypeVar("T")


def next_within(tail: warren.LogIterator[T], seconds: float = 15) -> T:
    """The next entry of a followed log; past ``seconds`` the tail is closed, so a test that
    waits for an entry that never comes fails (StopIteration) instead of hanging."""
    watchdog = threading.Timer(seconds, tail.close)
    watchdog.start()
    try:
        return next(tail)
    finally:
        watchdog.cancel()

"""The node protocol: what a device agent calls to enroll, report presence and routes, follow
its netmap and report connections. ``register`` keeps the node credential it receives for
every later call. Like the management client, every call here waits out a 429 and retries,
POSTs included: a refused call did nothing."""

from __future__ import annotations

from typing import Optional, Sequence

from ._config import setting
from ._decode import decode, format_time
from ._http import OwnsConnections, Transport, compact
from .errors import invalid_response
from .models import ConnectionReport, Heartbeat, Netmap, NetmapDelta, Registration


class NodeClient(OwnsConnections):
    """A device's side of Warren, authenticated by its node credential (``wrn_node_…``).

    ``url`` defaults to ``WARREN_URL``; ``node_token`` is a credential from an earlier
    registration (a restarted agent), or None until ``register``.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        node_token: Optional[str] = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        max_retry_wait: float = 60.0,
        user_agent: Optional[str] = None,
    ) -> None:
        self._http = Transport(
            setting(url, "WARREN_URL", "server URL"),
            None,
            timeout=timeout,
            max_retries=max_retries,
            max_retry_wait=max_retry_wait,
            user_agent=user_agent,
        )
        self.node_token = node_token
        #: The ETag of the last netmap received: pass it to ``netmap(if_none_match=…)``.
        self.netmap_etag: Optional[str] = None

    def register(
        self,
        auth_key: str,
        *,
        hostname: str,
        os: str,
        node_key: str,
        client_version: Optional[str] = None,
        advertise_routes: Optional[Sequence[str]] = None,
    ) -> Registration:
        """``POST /v1/node/register`` with an auth key; ``node_key`` is ``nodekey:`` + 64 hex digits.

        A node key already enrolled re-enrolls its device (same id and addresses, new credential).
        """
        body = compact(
            {
                "hostname": hostname,
                "os": os,
                "nodeKey": node_key,
                "clientVersion": client_version,
                "advertiseRoutes": None if advertise_routes is None else list(advertise_routes),
            }
        )
        answer = self._http.json("POST", "/v1/node/register", body=body, token=auth_key)
        registration = decode(Registration, answer)
        self.node_token = registration.node_token
        return registration

    def heartbeat(self, *, advertise_routes: Optional[Sequence[str]] = None) -> Heartbeat:
        """``POST /v1/node/heartbeat``: online now; ``advertise_routes`` (when given) replaces the set."""
        body = {} if advertise_routes is None else {"advertiseRoutes": list(advertise_routes)}
        return decode(Heartbeat, self._call("POST", "/v1/node/heartbeat", body))

    def disconnect(self) -> None:
        """``POST /v1/node/disconnect``: offline at once."""
        self._call("POST", "/v1/node/disconnect", None)

    def netmap(self, *, if_none_match: Optional[str] = None) -> Optional[Netmap]:
        """``GET /v1/node/netmap``: the peers this device may reach or be reached by.

        With ``if_none_match`` (an ETag from an earlier answer, e.g. ``netmap_etag``) it returns
        None while nothing changed (304).
        """
        headers = {"If-None-Match": if_none_match} if if_none_match else {}
        response = self._http.request("GET", "/v1/node/netmap", headers=headers, token=self._token())
        if response.status == 304:
            return None
        self.netmap_etag = response.header("ETag")
        return decode(Netmap, response.json())

    def follow_netmap(self, held: Optional[Netmap]) -> Optional[Netmap]:
        """The current netmap given the one held, fetching only what changed since its version.

        Asks ``GET /v1/node/netmap?delta=true`` for the peers changed or removed since
        ``held.version`` and applies them to ``held`` (which is not modified), or takes the full
        map when the server no longer knows that version. Returns None while nothing changed;
        without ``held`` it fetches the full map.
        """
        if held is None:
            return self.netmap()
        response = self._http.request(
            "GET",
            "/v1/node/netmap",
            query={"delta": True},
            headers={"If-None-Match": f'"{held.version}"'},
            token=self._token(),
        )
        if response.status == 304:
            return None
        self.netmap_etag = response.header("ETag")
        answer = response.json()
        if not isinstance(answer, dict) or "since" not in answer:
            return decode(Netmap, answer)
        delta = decode(NetmapDelta, answer)
        if delta.since != held.version:
            raise invalid_response(f"netmap delta is for version {delta.since}, but version {held.version} is held")
        removed = set(delta.peers_removed)
        changed = {peer.id: peer for peer in delta.peers_changed}
        # Peers keep their place and new ones come last: the order of peers carries no meaning.
        peers = [changed.pop(peer.id, peer) for peer in held.peers if peer.id not in removed]
        peers += [peer for peer in delta.peers_changed if peer.id in changed]
        return Netmap(device=delta.device, peers=tuple(peers), version=delta.version)

    def report_connections(self, entries: Sequence[ConnectionReport]) -> int:
        """``POST /v1/node/connections``: up to 1000 entries, stored all or none; returns how many."""
        body = {"entries": [_report(entry) for entry in entries]}
        answer = self._call("POST", "/v1/node/connections", body)
        accepted = answer.get("accepted") if isinstance(answer, dict) else None
        if not isinstance(accepted, int):
            raise invalid_response("the answer has no 'accepted' count")
        return accepted

    def _call(self, method: str, path: str, body: object) -> object:
        return self._http.json(method, path, body=body, token=self._token())

    def _token(self) -> str:
        if not self.node_token:
            raise ValueError("no node credential: register first, or pass node_token=")
        return self.node_token


def _report(entry: ConnectionReport) -> object:
    return {
        "start": format_time(entry.start),
        "end": format_time(entry.end),
        "proto": entry.proto,
        "src": {"addr": entry.src},
        "dst": {"addr": entry.dst},
        "txBytes": entry.tx_bytes,
        "rxBytes": entry.rx_bytes,
        "txPackets": entry.tx_packets,
        "rxPackets": entry.rx_packets,
    }

"""The API's records as frozen dataclasses: snake_case attributes, times as aware UTC datetimes.

Lists are tuples, so a record is immutable all the way down. Fields that only some answers
carry (a device's detail fields, a key's secret) default to ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, Generic, Literal, Optional, Tuple, TypeVar

from ._decode import json_name
from .errors import PolicyProblem

T = TypeVar("T")

# The API's enumerations, so mypy catches ``state="pendingg"``. A newer server's new value is
# still passed through as the string it is.
RouteState = Literal["pending", "approved", "disabled"]
KeyType = Literal["auth", "api"]
KeyState = Literal["valid", "expired", "revoked", "used"]
Role = Literal["owner", "admin", "network-admin", "it-admin", "auditor", "member"]
UserStatus = Literal["active", "suspended"]
Scope = Literal["read", "devices", "acls", "keys", "users", "webhooks", "all"]
DeliveryState = Literal["pending", "delivered", "failed"]
Protocol = Literal["native", "tailscale"]
"""What a device speaks: Warren's node protocol, or Tailscale's control protocol."""
Plan = Literal["free", "premium"]
EventType = Literal[
    "device.created",
    "device.deleted",
    "device.online",
    "device.offline",
    "device.updated",
    "device.pending",
    "device.approved",
    "device.key_expired",
    "route.advertised",
    "route.approved",
    "route.disabled",
    "policy.updated",
    "key.created",
    "key.deleted",
    "key.expiring",
    "key.expired",
    "user.created",
    "user.updated",
    "user.deleted",
    "webhook.test",
]
"""A kind of change (``Event.type``, ``WebhookDelivery.type``); filters also take families (``device.*``)."""
ActorType = Literal["key", "user", "device", "system"]
"""What made a change: an API key, a console session's user, a device (node protocol), or Warren itself."""
CallerType = Literal["key", "user"]


@dataclass(frozen=True)
class UserRef:
    id: str
    login_name: str


@dataclass(frozen=True)
class DeviceRoute:
    """A route as listed in a device's detail record."""

    id: str
    prefix: str
    state: RouteState
    advertised: bool
    primary: bool
    exit_node: bool = False
    """A default route (``0.0.0.0/0`` or ``::/0``)."""


@dataclass(frozen=True)
class Device:
    """A device; ``addresses`` onward are set on ``get`` and on ``list(fields="all")``."""

    id: str
    name: str
    hostname: str
    os: str
    online: bool
    user: Optional[UserRef]
    tags: Tuple[str, ...]
    created: datetime
    last_seen: Optional[datetime]
    authorized: bool = True
    """False while the device waits for approval."""
    key_expiry: Optional[datetime] = None
    """When the device's login expires; None when it never does."""
    key_expiry_disabled: bool = False
    key_expired: bool = False
    """The login expired: the device is in no netmap until it logs in again."""
    addresses: Optional[Tuple[str, ...]] = None
    routes: Optional[Tuple[DeviceRoute, ...]] = None
    client_version: Optional[str] = None
    key_id: Optional[str] = None
    ephemeral: Optional[bool] = None
    expires: Optional[datetime] = None
    exit_node: Optional[bool] = None
    """Whether the device serves as an exit node (both default routes approved and advertised)."""
    protocol: Optional[Protocol] = None
    dns_name: Optional[str] = None
    """Its MagicDNS name, ``<name>.<network domain>``."""


@dataclass(frozen=True)
class User:
    id: str
    login_name: str
    display_name: str
    role: Role
    status: UserStatus
    created: datetime
    last_seen: Optional[datetime]
    device_count: int


@dataclass(frozen=True)
class NetworkLimits:
    """``None`` is unlimited."""

    users: Optional[int]
    devices: Optional[int]
    log_retention_days: int
    webhooks: Optional[int] = None


@dataclass(frozen=True)
class NetworkUsage:
    users: int
    devices: int


DNSRecordType = Literal["A", "AAAA"]


@dataclass(frozen=True)
class DNSRecord:
    """An extra DNS record Tailscale clients answer themselves."""

    name: str
    type: DNSRecordType
    value: str
    """An IPv4 address for ``A``, an IPv6 one for ``AAAA``."""


@dataclass(frozen=True)
class NetworkDNS:
    """What Tailscale clients are told about DNS."""

    domain: str
    """The MagicDNS domain: devices are ``<name>.<domain>``."""
    magic_dns: bool = True
    nameservers: Tuple[str, ...] = ()
    search_domains: Tuple[str, ...] = ()
    split_dns: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    """Split DNS: a domain to the nameservers for names under it; an empty tuple makes the
    clients answer those names themselves (extra records) and forward none."""
    extra_records: Tuple[DNSRecord, ...] = ()


@dataclass(frozen=True)
class NetworkDERP:
    """The relays (DERP map) Tailscale clients are given."""

    embedded: bool = True
    """The server's embedded relay is in the map when it runs one."""
    regions: Tuple[Dict[str, Any], ...] = ()
    """Tailscale DERP map regions (``tailcfg.DERPRegion``), in Tailscale's field names."""


@dataclass(frozen=True)
class NetworkSSO:
    """The network's single sign-on at a glance."""

    configured: bool
    enforce: bool
    """Only single sign-on signs people in."""
    redirect_uri: Optional[str] = None
    """The callback to register with the identity provider; None until the server knows its public URL."""


@dataclass(frozen=True)
class Network:
    id: str
    name: str
    plan: Plan
    limits: NetworkLimits
    usage: NetworkUsage
    device_approval: bool = False
    """New devices wait for an admin's approval."""
    node_key_expiry: str = "180d"
    """How long a device's login lasts: a duration, or ``"0"`` for never."""
    flow_logs: bool = False
    """Tailscale clients log their network flows into the connection log."""
    dns: Optional[NetworkDNS] = None
    derp: Optional[NetworkDERP] = None
    sso: Optional[NetworkSSO] = None
    """Whether single sign-on is set up and enforced (``client.network.sso()`` has the settings)."""


@dataclass(frozen=True)
class SSO:
    """The network's OpenID provider; the client secret is never returned."""

    issuer: str
    client_id: str
    allowed_domains: Tuple[str, ...]
    enforce: bool
    redirect_uri: str
    updated: datetime


@dataclass(frozen=True)
class MeNetwork:
    id: str
    name: str


@dataclass(frozen=True)
class MeKey:
    id: str
    name: str


@dataclass(frozen=True)
class Me:
    """The caller: an API key (``type == "key"``) or a console session's user."""

    type: CallerType
    network: MeNetwork
    user: Optional[User]
    key: Optional[MeKey]
    scopes: Tuple[Scope, ...]
    own_devices_only: bool
    expires: datetime
    csrf_token: Optional[str] = field(default=None, repr=False)
    """A console session's CSRF token; left out of repr(), like every secret of a record."""


@dataclass(frozen=True)
class Key:
    """An auth key (``type == "auth"``) or an API key (``type == "api"``).

    ``key`` holds the secret only in the answer to ``keys.create``; repr() leaves it out, so
    logging a new key never logs its secret.
    """

    id: str
    type: KeyType
    description: str
    scopes: Tuple[Scope, ...]
    created: datetime
    expires: datetime
    state: KeyState
    uses: int
    last_used: Optional[datetime]
    created_by: Optional[str]
    key: Optional[str] = field(default=None, repr=False)
    name: Optional[str] = None
    reusable: Optional[bool] = None
    ephemeral: Optional[bool] = None
    pre_approved: Optional[bool] = None
    tags: Optional[Tuple[str, ...]] = None
    user: Optional[str] = None
    rate_limit: Optional[int] = None


@dataclass(frozen=True)
class Route:
    id: str
    device_id: str
    device_name: str
    prefix: str
    state: RouteState
    advertised: bool
    auto_approved: bool
    primary: bool
    approved_at: Optional[datetime]
    approved_by: Optional[str]
    created: datetime
    exit_node: bool = False
    """A default route (``0.0.0.0/0`` or ``::/0``)."""


@dataclass(frozen=True)
class Endpoint:
    """One side of a connection; ``device_id`` is None outside the network."""

    addr: str
    device_id: Optional[str] = None
    device_name: Optional[str] = None
    """The device's name when the entry was read; None outside the network or for a removed device."""


@dataclass(frozen=True)
class ConnectionEntry:
    id: str
    start: datetime
    end: datetime
    proto: str
    src: Endpoint
    dst: Endpoint
    tx_bytes: int
    rx_bytes: int
    tx_packets: int
    rx_packets: int
    reported_by: str
    logged: datetime


@dataclass(frozen=True)
class AuditEntry:
    id: str
    time: datetime
    key_id: Optional[str]
    key_name: Optional[str]
    device_id: Optional[str]
    method: str
    path: str
    status: int
    client_addr: str
    request_id: str
    action: Optional[str]
    target: Optional[str]
    user_id: Optional[str] = None
    user_login: Optional[str] = None


@dataclass(frozen=True)
class DevicePage:
    """One page of devices in name order (``client.devices.page``)."""

    devices: Tuple[Device, ...]
    next_cursor: Optional[str]
    """Pass it back as ``cursor`` for the next page; None on the last one."""
    has_more: bool
    total: int
    """How many devices the filters select, on every page."""


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a log; pass ``next_cursor`` back later to get only what arrived since."""

    entries: Tuple[T, ...]
    next_cursor: str
    has_more: bool


@dataclass(frozen=True)
class Policy:
    """The policy as JSON (comments dropped) with its ETag."""

    document: Dict[str, Any]
    etag: str


@dataclass(frozen=True)
class PolicyText:
    """The policy's HuJSON text exactly as stored, with its ETag."""

    text: str
    etag: str


@dataclass(frozen=True)
class PolicyVersion:
    version: int
    etag: str
    created: datetime
    created_by: Optional[str]


@dataclass(frozen=True)
class PolicyTestResult:
    """One entry of the policy's ``tests``: where it starts, its ``src`` and what failed.

    Each of ``failures`` (a broken expectation or a malformed part) is also in the result's
    ``errors``.
    """

    line: int
    src: str
    passed: bool
    failures: Tuple[PolicyProblem, ...]


@dataclass(frozen=True)
class ValidationResult:
    valid: bool
    errors: Tuple[PolicyProblem, ...]
    #: Each entry of the policy's ``tests`` in document order; empty when the text does not parse.
    tests: Tuple[PolicyTestResult, ...] = ()


@dataclass(frozen=True)
class Peer:
    id: str
    name: str
    addresses: Tuple[str, ...]
    allowed_ips: Tuple[str, ...] = field(metadata=json_name("allowedIPs"))
    tags: Tuple[str, ...]
    online: bool


@dataclass(frozen=True)
class Netmap:
    """What a device may reach: ``device`` is the device itself (``self`` in the JSON)."""

    device: Device = field(metadata=json_name("self"))
    peers: Tuple[Peer, ...]
    version: int


@dataclass(frozen=True)
class NetmapDelta:
    """What changed in a netmap since version ``since`` (``GET /v1/node/netmap?delta=true``);
    ``NodeClient.follow_netmap`` applies it to the map held."""

    device: Device = field(metadata=json_name("self"))
    version: int
    since: int
    peers_changed: Tuple[Peer, ...]
    """Peers that are new or differ from the held ones, whole."""
    peers_removed: Tuple[str, ...]
    """Ids of peers that are no longer peers."""


@dataclass(frozen=True)
class Registration:
    """The answer to ``NodeClient.register``: the device and its node credential, shown once."""

    device: Device
    node_token: str = field(repr=False)


@dataclass(frozen=True)
class Heartbeat:
    online: bool
    netmap_version: int


@dataclass(frozen=True)
class ConnectionReport:
    """One connection a device reports; ``src`` and ``dst`` are ``address:port``."""

    start: datetime
    end: datetime
    proto: str
    src: str
    dst: str
    tx_bytes: int = 0
    rx_bytes: int = 0
    tx_packets: int = 0
    rx_packets: int = 0


@dataclass(frozen=True)
class EventActor:
    """Who made the change: ``key``, ``user``, ``device`` or ``system``."""

    type: ActorType
    id: Optional[str]
    name: Optional[str]


@dataclass(frozen=True)
class Event:
    """One change of state; ``data`` holds the record(s) after it (``{"device": {...}}``)."""

    id: str
    type: EventType
    time: datetime
    actor: EventActor
    data: Dict[str, Any]


@dataclass(frozen=True)
class Webhook:
    """An endpoint that receives events; ``secret`` is set only in the answer to ``webhooks.create``."""

    id: str
    url: str
    events: Tuple[str, ...]
    description: str
    enabled: bool
    disabled_reason: Optional[str]
    created: datetime
    last_delivery: Optional[datetime]
    secret: Optional[str] = field(default=None, repr=False)
    """The signing secret (``whsec_…``), in the answer to ``create`` only; not in repr()."""


@dataclass(frozen=True)
class WebhookDelivery:
    """One event on its way to one endpoint: ``state`` is ``pending``, ``delivered`` or ``failed``."""

    id: str
    event_id: str
    type: EventType
    state: DeliveryState
    attempts: int
    last_status: Optional[int]
    last_error: Optional[str]
    next_attempt: Optional[datetime]
    created: datetime
